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

/** Sends one request; rejects when no answer came (network error, abort, timeout) or the answer is over `MAX_ANSWER_CHARS`. */
export type HttpCall = (url: string, request: HttpRequest) => Promise<HttpAnswer>;

/**
 * The longest answer read, in characters (8 MiB of ASCII): the service's largest, a page of 100
 * payments, is a few hundred KB. A longer one is not kept in memory: reading it whole could take
 * the process down with it.
 */
export const MAX_ANSWER_CHARS = 8 * 1024 * 1024;

/** An answer cut off at `MAX_ANSWER_CHARS`: the service's fault (the transport makes it an `InvalidResponseError`). */
export class AnswerTooLargeError extends Error {
  override name = 'AnswerTooLargeError';
  constructor(readonly status: number) {
    super(`the answer is longer than ${MAX_ANSWER_CHARS} characters`);
  }
}

/** Whether a `Content-Length` already says the answer is too long to read (UTF-8 takes at most 3 bytes per UTF-16 character). */
const announcedTooLong = (contentLength: string | null | undefined) => contentLength != null && Number(contentLength) > MAX_ANSWER_CHARS * 3;

/** `text` without a leading byte order mark, as fetch's `text()` gives it. */
const withoutBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** A fetch answer's body as text, up to `MAX_ANSWER_CHARS`. */
async function cappedText(response: Response): Promise<string> {
  if (announcedTooLong(response.headers.get('content-length'))) {
    await response.body?.cancel();
    throw new AnswerTooLargeError(response.status);
  }
  if (!response.body) return response.text();
  const decoder = new TextDecoder();
  let text = '';
  const reader = response.body.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    text += decoder.decode(chunk.value, { stream: true });
    if (text.length > MAX_ANSWER_CHARS) {
      await reader.cancel().catch(() => undefined);
      throw new AnswerTooLargeError(response.status);
    }
  }
  text += decoder.decode();
  return withoutBom(text);
}

/** The transport over a `fetch` (the client's `fetch` option, or where Node's `http` is not available). */
export function fetchCall(fetchImpl: typeof fetch): HttpCall {
  return async (url, { method, headers, body, signal }) => {
    const response = await fetchImpl(url, { method, headers, body, signal });
    const text = await cappedText(response);
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
          const tooLarge = () => {
            fail(new AnswerTooLargeError(res.statusCode ?? 0));
            req.destroy();
          };
          if (announcedTooLong(res.headers['content-length'])) return tooLarge();
          res.setEncoding('utf8');
          let text = '';
          res.on('data', (chunk: string) => {
            text += chunk;
            if (text.length > MAX_ANSWER_CHARS) tooLarge();
          });
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
              text: withoutBom(text),
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
