import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { badRequest, SandboxHttpError, unprocessable } from './http-error.js';
import type { SandboxData } from './records.js';

/** The spec's limit on Idempotency-Key length (section 8). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The request's `Idempotency-Key`, checked; 400 when required and missing, or too long. */
export function idempotencyKeyOf(request: FastifyRequest, required: boolean): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) {
    if (required) throw badRequest('The Idempotency-Key header is required on this operation.');
    return undefined;
  }
  const key = Array.isArray(value) ? value.join(',') : value;
  if (key.trim() === '') throw badRequest('Idempotency-Key is empty.');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw badRequest(`Idempotency-Key is ${key.length} characters; at most ${MAX_IDEMPOTENCY_KEY_LENGTH} are allowed.`);
  return key;
}

/** JSON with sorted keys, so `{"a":1,"b":2}` and `{"b":2,"a":1}` count as the same body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function bodyHash(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}

/** Called by a create, inside the same state change as the new record, to remember the key. */
export type Remember = (data: SandboxData, resourceId: string) => void;

export interface IdempotentCreate {
  /** Caller and operation, e.g. `<merchantId>:payments.create`: keys are per caller and operation. */
  scope: string;
  key: string | undefined;
  body: unknown;
}

/**
 * Idempotency-Key semantics: the same key and body replays the first result (200); another body is
 * 422 `idempotency_key_reused`; the same key while the first request is still running is 409.
 * Failed creates (4xx) remember nothing, so the key can be used again.
 */
export class Idempotency {
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly data: () => SandboxData,
    private readonly createDelayMs: number,
  ) {}

  async run(request: IdempotentCreate, create: (remember: Remember) => Promise<string>): Promise<{ resourceId: string; replayed: boolean }> {
    const { scope, key } = request;
    if (key === undefined) return { resourceId: await this.create(create, () => undefined), replayed: false };
    const slot = `${scope}\n${key}`;
    if (this.inFlight.has(slot)) {
      throw new SandboxHttpError(409, 'idempotency_key_in_flight', 'A request with this Idempotency-Key is still being processed; retry shortly.');
    }
    const hash = bodyHash(request.body);
    const done = this.data().idempotency.find((r) => r.scope === scope && r.key === key);
    if (done) {
      if (done.bodyHash !== hash)
        throw unprocessable('idempotency_key_reused', 'This Idempotency-Key was used with a different request body; use a new key for a new request.');
      return { resourceId: done.resourceId, replayed: true };
    }
    this.inFlight.add(slot);
    try {
      const remember: Remember = (data, resourceId) => {
        data.idempotency.push({ scope, key, bodyHash: hash, resourceId, createdAt: new Date().toISOString() });
      };
      return { resourceId: await this.create(create, remember), replayed: false };
    } finally {
      this.inFlight.delete(slot);
    }
  }

  private async create(create: (remember: Remember) => Promise<string>, remember: Remember): Promise<string> {
    if (this.createDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.createDelayMs));
    return create(remember);
  }
}
