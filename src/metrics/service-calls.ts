import type { HttpCallRecord } from '../client/index.js';

/** The operations of the service the client calls, by method and path (after `/v1/`). */
function operationOf(method: string, url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return 'other';
  }
  const at = path.indexOf('/v1/');
  const segments =
    at === -1
      ? []
      : path
          .slice(at + '/v1/'.length)
          .split('/')
          .filter(Boolean);
  const [first, second, third] = segments;
  if (first === 'partner' && (second === 'merchants' || second === 'payments') && third === undefined && method === 'POST') return `partner.${second}.create`;
  if (first !== 'payments' && first !== 'invoices') return 'other';
  if (second === undefined) return method === 'POST' ? `${first}.create` : `${first}.list`;
  return third === undefined && method === 'GET' ? `${first}.get` : 'other';
}

/** One count per operation and answer (`200`, `429`, …, `error` when no answer came, `invalid_response` for a body that does not match the spec). */
export interface ServiceCallCount {
  operation: string;
  status: string;
  count: number;
}

/**
 * Counts every HTTP call the client makes to the service, retries included, by operation and
 * status: the confirm reads (`payments.get`, `invoices.get`) and the 429s of the metrics. Give
 * `onCall` to the client (`clientFromConfig(config, logger, { onCall })`), or, for a client of
 * your own, wrap its `fetch` with `fetch`.
 */
export class ServiceCalls {
  private readonly counts = new Map<string, ServiceCallCount>();
  private readonly inner: typeof fetch;

  constructor(inner: typeof fetch = (input, init) => globalThis.fetch(input, init)) {
    this.inner = inner;
  }

  /** The client's `onCall`: counts one exchange. */
  readonly onCall = (call: HttpCallRecord): void => {
    this.count(operationOf(call.method.toUpperCase(), call.url), String(call.status));
  };

  /** A `fetch` that counts what it sends (through `onCall`). */
  readonly fetch: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init?.method ?? 'GET';
    try {
      const response = await this.inner(input, init);
      this.onCall({ method, url, status: response.status });
      return response;
    } catch (error) {
      this.onCall({ method, url, status: 'error' });
      throw error;
    }
  };

  /** The counts so far, by operation and status. */
  snapshot(): ServiceCallCount[] {
    return [...this.counts.values()].map((entry) => ({ ...entry }));
  }

  private count(operation: string, status: string): void {
    const key = `${operation} ${status}`;
    const entry = this.counts.get(key) ?? { operation, status, count: 0 };
    entry.count += 1;
    this.counts.set(key, entry);
  }
}
