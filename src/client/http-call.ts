import type { Agent as HttpAgent, IncomingMessage, RequestOptions } from 'node:http';

/** One HTTP exchange as the transport needs it: the whole answer, read. */
export interface HttpAnswer {
  status: number;
  statusText: string;
  header(name: string): string | undefined;
  text: string;
}

export interface HttpRequest {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
}

/** Sends one request; rejects when no answer came (network error, abort, timeout). */
export type HttpCall = (url: string, request: HttpRequest) => Promise<HttpAnswer>;

/** The transport over a `fetch` (the client's `fetch` option, or where Node's `http` is not available). */
export function fetchCall(fetchImpl: typeof fetch): HttpCall {
  return async (url, { method, headers, body, signal }) => {
    const response = await fetchImpl(url, { method, headers, body, signal });
    const text = await response.text();
    return { status: response.status, statusText: response.statusText, header: (name) => response.headers.get(name) ?? undefined, text };
  };
}

type NodeModules = { http: typeof import('node:http'); https: typeof import('node:https') };

/**
 * The transport over Node's `http`/`https` with keep-alive agents: the default. A confirm read
 * through global `fetch` cost about three times the CPU (its web streams and Response objects),
 * which in `serve` is taken from acknowledging deliveries during a burst. Loaded on first use, so
 * that runtimes without `node:http` fall back to `fetch`. No redirects are followed (an API
 * answer of 3xx is an error, as any other non-2xx), and no compression is asked for.
 */
export function nodeHttpCall(): HttpCall {
  let modules: Promise<NodeModules | undefined> | undefined;
  const agents = new Map<string, HttpAgent>();
  const fallback = fetchCall((input, init) => globalThis.fetch(input, init));
  return async (url, request) => {
    modules ??= Promise.all([import('node:http'), import('node:https')]).then(
      ([http, https]) => ({ http, https }),
      () => undefined,
    );
    const loaded = await modules;
    if (!loaded) return fallback(url, request);
    const secure = url.startsWith('https:');
    const protocol = secure ? 'https:' : 'http:';
    let agent = agents.get(protocol);
    // Idle sockets go after 4 s (as undici's do): many servers and balancers close idle
    // connections without saying when, and a request on a socket they just closed fails.
    if (!agent) agents.set(protocol, (agent = new (secure ? loaded.https : loaded.http).Agent({ keepAlive: true, scheduling: 'lifo', timeout: 4_000 })));
    // The signal is listened to here rather than given to `request` (whose abort support wires
    // each request to it through a stream helper): ~30 µs less CPU per call, and the listener
    // leaves the signal as soon as the exchange ends.
    const options: RequestOptions = { method: request.method, headers: request.headers, agent };
    const { signal } = request;
    const send = (retried: boolean): Promise<HttpAnswer> =>
      new Promise<HttpAnswer>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        const finish = () => signal.removeEventListener('abort', onAbort);
        const fail = (error: unknown) => {
          finish();
          reject(error);
        };
        const req = (secure ? loaded.https : loaded.http).request(url, options, (res: IncomingMessage) => {
          res.setEncoding('utf8');
          let text = '';
          res.on('data', (chunk: string) => (text += chunk));
          res.on('error', fail);
          res.on('close', () => res.complete || fail(new Error('the connection closed before the answer was complete')));
          res.on('end', () => {
            finish();
            resolve({
              status: res.statusCode ?? 0,
              statusText: res.statusMessage ?? '',
              header: (name) => {
                const value = res.headers[name.toLowerCase()];
                return Array.isArray(value) ? value.join(', ') : value;
              },
              // fetch's text() drops a byte order mark; so does this.
              text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text,
            });
          });
        });
        function onAbort() {
          req.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
        }
        signal.addEventListener('abort', onAbort, { once: true });
        req.on('error', (error: NodeJS.ErrnoException) => {
          // A kept-alive socket the server had closed meanwhile: once more on a new one, as Node's
          // docs advise (a create carries its Idempotency-Key, so this is safe for it too).
          if (!retried && req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE') && !signal.aborted) {
            finish();
            resolve(send(true));
          } else fail(error);
        });
        req.end(request.body);
      });
    return send(false);
  };
}
