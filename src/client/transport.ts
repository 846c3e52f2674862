import pRetry, { AbortError } from 'p-retry';
import type { z } from 'zod';
import { ApiError, CheckoutKitError, ConfigError, InvalidResponseError, isServiceOutage, NetworkError, TimeoutError } from '../errors/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { ErrorObjectSchema } from '../schemas/index.js';
import { AnswerTooLargeError, fetchCall, MAX_ANSWER_CHARS, nodeHttpCall, type HttpAnswer, type HttpCall } from './http-call.js';
import { RateLimiter } from './rate-limiter.js';
import { parseRetryAfter, isRetryable } from './retry-policy.js';
import { defaultRequestSigner, type RequestSigner } from './signer.js';
import { deadline } from '../timers/index.js';

/** The longest delay a Node timer keeps (2^31 − 1 ms); longer ones fire after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

/** Options shared by every client. */
export interface TransportOptions {
  /** The service's base URL, e.g. `https://api.example.com`; a path prefix (`https://host/api`) is kept and signed. */
  baseUrl: string;
  /** Retries after the first attempt for retryable failures. @default 4 */
  retries?: number;
  /** Per-attempt timeout in milliseconds. @default 15000 */
  timeoutMs?: number;
  /** First retry delay in milliseconds (doubles each retry, capped at 8 s). @default 250 */
  minRetryDelayMs?: number;
  /** Longest `Retry-After` honoured, in milliseconds. @default 60000 */
  maxRetryAfterMs?: number;
  /** Produces `X-Request-Signature`. @default defaultRequestSigner (`t=<unix seconds>,v1=<hex HMAC-SHA256>`) */
  signer?: RequestSigner;
  /**
   * Send requests through this `fetch` instead. By default they go through Node's `http`/`https`
   * with keep-alive (a third of fetch's CPU per call), or global `fetch` where those are missing.
   * @default Node's http, keep-alive
   */
  fetch?: typeof fetch;
  /** Told of every HTTP exchange, retries included (`serve` counts them for its metrics). */
  onCall?: (call: HttpCallRecord) => void;
  /** @default silent */
  logger?: Logger;
  /**
   * Calls per second the service allows, shared by every call of this client (and of any client
   * given the same `rateLimiter`): calls start 5% under it (`RateLimiterOptions.headroom`), and a
   * 429 slows them all, not only the call that got it. Ignored when `rateLimiter` is given. @default 50
   */
  maxRps?: number;
  /** One limiter to share between clients of the same service (say a CheckoutClient and a PartnerClient). */
  rateLimiter?: RateLimiter;
}

/**
 * One exchange with the service: `status` is `error` when no answer came, `invalid_response` when
 * a success status came with a body that does not match the spec (an `InvalidResponseError`).
 */
export interface HttpCallRecord {
  method: string;
  url: string;
  status: number | 'error' | 'invalid_response';
}

/** Credentials one request is sent with. */
export interface RequestAuth {
  bearer: string;
  /** When set, the request is signed with it. */
  signingSecret?: string | undefined;
}

export interface RequestSpec<S extends z.ZodType> {
  /** Name used in errors, e.g. `payments.create`. */
  operation: string;
  method: 'GET' | 'POST';
  /** Path with query as the spec writes it, relative to the base URL, e.g. `/v1/payments`. */
  path: string;
  body?: Record<string, unknown>;
  auth: RequestAuth;
  idempotencyKey?: string;
  schema: S;
  signal?: AbortSignal | undefined;
}

/** Per-call options every operation accepts. */
export interface CallOptions {
  /** Abort the call (and its retries). */
  signal?: AbortSignal;
}

/** Sends requests with auth, signature, timeout, retries and schema validation. */
export class Transport {
  readonly baseUrl: string;
  /** Every call of this client starts through it (see `TransportOptions.maxRps`). */
  readonly rateLimiter: RateLimiter;
  private readonly options: Required<Omit<TransportOptions, 'baseUrl' | 'maxRps' | 'rateLimiter' | 'fetch' | 'onCall'>>;
  private readonly call: HttpCall;
  private readonly onCall: ((call: HttpCallRecord) => void) | undefined;
  /** Since when attempts have been failing (a retryable failure), and how many: said once, not per attempt. */
  private failing: { since: string; attempts: number } | undefined;

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const base = URL.canParse(this.baseUrl) ? new URL(this.baseUrl) : undefined;
    if (!base || !/^https?:$/.test(base.protocol) || base.search || base.hash) {
      throw new ConfigError(
        `baseUrl ${JSON.stringify(options.baseUrl)} is not an http(s) URL without query or fragment: give the service's base address, e.g. https://api.example.com or https://host/api.`,
      );
    }
    // Checked here: the attempt's timer would take a bad value (NaN, Infinity, negative, over ~24.8
    // days) as 1 ms and time every call out.
    if (options.timeoutMs !== undefined && !(Number.isInteger(options.timeoutMs) && options.timeoutMs > 0 && options.timeoutMs <= MAX_TIMER_MS)) {
      throw new ConfigError(`timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${options.timeoutMs}.`);
    }
    // p-retry would only refuse these at the first call, or (a fraction of a retry) fail it with
    // "Retry attempts exhausted without throwing an error".
    if (options.retries !== undefined && !(Number.isInteger(options.retries) && options.retries >= 0)) {
      throw new ConfigError(`retries must be a whole number of retries, 0 or more, got ${String(options.retries)}.`);
    }
    for (const name of ['minRetryDelayMs', 'maxRetryAfterMs'] as const) {
      const value = options[name];
      if (value !== undefined && !(Number.isInteger(value) && value >= 0 && value <= MAX_TIMER_MS)) {
        throw new ConfigError(`${name} must be a whole number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${String(value)}.`);
      }
    }
    if (options.maxRps !== undefined && !(typeof options.maxRps === 'number' && Number.isFinite(options.maxRps) && options.maxRps > 0)) {
      throw new ConfigError(`maxRps must be a positive number of calls a second, got ${String(options.maxRps)}.`);
    }
    this.rateLimiter = options.rateLimiter ?? new RateLimiter({ maxRps: options.maxRps });
    this.options = {
      retries: options.retries ?? 4,
      timeoutMs: options.timeoutMs ?? 15_000,
      minRetryDelayMs: options.minRetryDelayMs ?? 250,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      signer: options.signer ?? defaultRequestSigner,
      logger: options.logger ?? silentLogger,
    };
    this.call = options.fetch ? fetchCall(options.fetch) : nodeHttpCall();
    this.onCall = options.onCall;
  }

  /** Send a request; retries retryable failures with the same body and Idempotency-Key. */
  async request<S extends z.ZodType>(spec: RequestSpec<S>): Promise<z.infer<S>> {
    const body = spec.body === undefined ? '' : JSON.stringify(spec.body);
    return pRetry(
      async () => {
        try {
          const answer = await this.attempt(spec, body);
          this.answered(spec.operation);
          return answer;
        } catch (error) {
          // Anything but an outage (a refusal, a 409 for a key in flight, an answer off the spec) is the service answering.
          if (!isServiceOutage(error)) this.answered(spec.operation);
          // Stop at once for what a retry cannot fix; p-retry unwraps AbortError.
          if (!isRetryable(error)) throw new AbortError(error as Error);
          throw error;
        }
      },
      {
        retries: this.options.retries,
        minTimeout: this.options.minRetryDelayMs,
        maxTimeout: 8_000,
        factor: 2,
        randomize: true,
        signal: spec.signal,
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          if (!isRetryable(error) || retriesLeft === 0) return;
          const line = { operation: spec.operation, attempt: attemptNumber, error: error.message };
          if (!isServiceOutage(error)) {
            // A 409 (the same key in flight) is an answer: said per attempt.
            this.options.logger.warn(line, `${spec.operation}: attempt ${attemptNumber} failed, retrying`);
          } else if (this.failing === undefined) {
            // In an outage every call fails every attempt: the first failure is a warning, the rest
            // debug, until an answer comes (said at info), so the log shows the outage, not each try.
            this.failing = { since: new Date().toISOString(), attempts: 1 };
            this.options.logger.warn(
              line,
              `${spec.operation}: attempt ${attemptNumber} failed, retrying (${error.message}). Further failed attempts of any call are logged at debug until the service answers again.`,
            );
          } else {
            this.failing.attempts += 1;
            this.options.logger.debug(line, `${spec.operation}: attempt ${attemptNumber} failed, retrying`);
          }
          // A 429 paused the shared limiter until Retry-After: the retry waits there, with every other call.
          if (error instanceof ApiError && error.status !== 429 && error.retryAfterMs !== undefined) await sleep(error.retryAfterMs, spec.signal);
        },
      },
    );
  }

  private async attempt<S extends z.ZodType>(spec: RequestSpec<S>, body: string): Promise<z.infer<S>> {
    // Wait for the shared limiter first: the signature's timestamp must be fresh when the request leaves.
    await this.rateLimiter.acquire(spec.signal);
    const target = new URL(`${this.baseUrl}${spec.path}`);
    const url = target.href;
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Bearer ${spec.auth.bearer}`,
    };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    if (spec.auth.signingSecret) {
      // Signed per attempt: the timestamp must be fresh on every retry. The path signed is the one
      // on the wire, base-URL prefix and query included, not the spec's path.
      const path = `${target.pathname}${target.search}`;
      headers['x-request-signature'] = this.options.signer({ method: spec.method, path, body, secret: spec.auth.signingSecret });
    }

    const attempt = deadline(this.options.timeoutMs, spec.signal);
    let response: HttpAnswer;
    try {
      response = await this.call(url, { method: spec.method, headers, body: spec.body === undefined ? undefined : body, signal: attempt.signal });
    } catch (error) {
      if (error instanceof AnswerTooLargeError) {
        const issue = { code: 'custom' as const, path: [], message: error.message, input: undefined };
        throw this.invalidResponse(spec, url, error.status, [issue], `is longer than ${MAX_ANSWER_CHARS} characters: not read`);
      }
      this.tell({ method: spec.method, url, status: 'error' });
      throw this.transportError(spec, url, error, attempt.timedOut());
    } finally {
      attempt.release();
    }
    this.options.logger.debug({ operation: spec.operation, method: spec.method, path: spec.path, status: response.status }, 'response');

    if (response.status < 200 || response.status > 299) {
      this.tell({ method: spec.method, url, status: response.status });
      const error = this.apiError(spec, url, response);
      if (error.status === 429) this.rateLimiter.throttled(error.retryAfterMs);
      throw error;
    }
    const parsed = parseAnswer(spec.schema, response.text);
    if (!parsed.success) throw this.invalidResponse(spec, url, response.status, parsed.issues, parsed.problem);
    this.tell({ method: spec.method, url, status: response.status });
    return parsed.data;
  }

  /**
   * A success answer that is not what the spec says (or too long to read): the service's fault,
   * not the caller's, counted as a failed exchange and said once here, for every operation,
   * whoever made the call (a checkout, a confirm read, a command).
   */
  private invalidResponse(spec: RequestSpec<z.ZodType>, url: string, status: number, issues: z.core.$ZodIssue[], problem: string | undefined) {
    this.tell({ method: spec.method, url, status: 'invalid_response' });
    const error = new InvalidResponseError({ operation: spec.operation, status, method: spec.method, url, issues, problem });
    this.options.logger.warn({ operation: spec.operation, method: spec.method, path: spec.path, status, fields: error.fields }, error.message);
    return error;
  }

  /** The service answered (a success, or a refusal no retry changes): ends a run of failed attempts. */
  private answered(operation: string): void {
    if (this.failing === undefined) return;
    const { since, attempts } = this.failing;
    this.failing = undefined;
    this.options.logger.info(
      { operation, failedAttempts: attempts, since },
      `the service answers again (${operation}), after ${attempts} failed attempt(s) since ${since}`,
    );
  }

  /** An observer that throws must not turn the call's outcome into its error. */
  private tell(call: HttpCallRecord): void {
    try {
      this.onCall?.(call);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'onCall threw; the call goes on');
    }
  }

  private transportError(spec: RequestSpec<z.ZodType>, url: string, error: unknown, timedOut: boolean): Error {
    if (spec.signal?.aborted) return spec.signal.reason instanceof Error ? spec.signal.reason : new CheckoutKitError(`${spec.operation} was aborted`);
    if (timedOut) {
      return new TimeoutError(
        `${spec.operation} got no answer within ${this.options.timeoutMs} ms (${spec.method} ${url}); raise timeoutMs or check the service.`,
        {
          cause: error,
        },
      );
    }
    // fetch wraps the reason in a TypeError's cause; Node's http gives it as it is.
    const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    return new NetworkError(`${spec.operation} could not reach the service (${spec.method} ${url}): ${cause}. Check CHECKOUT_BASE_URL and connectivity.`, {
      cause: error,
    });
  }

  /**
   * An error status as an `ApiError`. Whether its body is the spec's error object is decided here,
   * once for every operation: only then does the refusal come from the service's contract; any
   * other body (HTML, plain text, empty, JSON of another shape) is marked `hasErrorObject: false`.
   */
  private apiError(spec: RequestSpec<z.ZodType>, url: string, response: HttpAnswer): ApiError {
    const said = errorObjectOf(response.text);
    return new ApiError({
      status: response.status,
      code: said?.code ?? `http_${response.status}`,
      message: said?.message ?? (response.statusText || 'error without a body'),
      hasErrorObject: said !== undefined,
      operation: spec.operation,
      method: spec.method,
      url,
      idempotencyKey: spec.idempotencyKey,
      retryAfterMs: parseRetryAfter(response.header('retry-after') ?? null, this.options.maxRetryAfterMs),
    });
  }
}

/** The spec's error object (spec 2.6) of an error answer's body; undefined for any other body. */
function errorObjectOf(text: string): { code: string; message: string } | undefined {
  try {
    const parsed = ErrorObjectSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.error : undefined;
  } catch {
    return undefined;
  }
}

/** A success answer's body read with the operation's schema, or why it cannot be. */
function parseAnswer<S extends z.ZodType>(
  schema: S,
  text: string,
): { success: true; data: z.infer<S> } | { success: false; issues: z.core.$ZodIssue[]; problem: string | undefined } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const start = text.slice(0, 40);
    return { success: false, problem: 'is not JSON', issues: [{ code: 'custom', path: [], message: `body starts ${JSON.stringify(start)}`, input: start }] };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { success: true, data: parsed.data } : { success: false, issues: parsed.error.issues, problem: undefined };
}

/** Wait `ms`, or reject with the signal's reason once it aborts; leaves no listener on the signal (it may live as long as the process). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
