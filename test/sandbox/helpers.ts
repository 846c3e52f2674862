import { freePort, listenOnLoopback } from '../support/ports.js';
import { removeTempDirs, tempDir as makeTempDir } from '../support/temp-dirs.js';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import { defaultRequestSigner } from '../../src/client/signer.js';
import { startSandbox, type SandboxCredentials, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';

const open: SandboxHandle[] = [];

export const tempDir = (prefix = 'checkout-sandbox-') => makeTempDir(prefix);

/** Start a sandbox on 127.0.0.1, port 0, in a fresh data dir unless one is given; `cleanup()` closes it. */
export async function openSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const sandbox = await startSandbox({ dataDir: options.dataDir ?? (await tempDir()), ...options });
  open.push(sandbox);
  return sandbox;
}

/**
 * A shop for a `checkout-kit serve` child process: a fresh folder whose fulfillment.mjs is
 * `handlers`, the free port serve is to listen on, and a sandbox delivering its webhooks there.
 */
export async function openShop(prefix: string, handlers: string, options: SandboxOptions = {}): Promise<{ dir: string; port: number; sandbox: SandboxHandle }> {
  const dir = await tempDir(prefix);
  await writeFile(join(dir, 'fulfillment.mjs'), handlers);
  const port = await freePort();
  const sandbox = await openSandbox({ webhookUrls: [`http://127.0.0.1:${port}/webhooks/checkout`], ...options });
  return { dir, port, sandbox };
}

/** Close every sandbox and remove every temp dir (call in afterEach / afterAll). */
export async function cleanup(): Promise<void> {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await removeTempDirs();
}

/** `credentials.json` as written by the sandbox. */
export async function readCredentials(sandbox: SandboxHandle): Promise<SandboxCredentials> {
  return JSON.parse(await readFile(sandbox.credentialsPath, 'utf8')) as SandboxCredentials;
}

/** The persisted state, to count records. */
export async function readState(
  sandbox: SandboxHandle,
): Promise<{ payments: unknown[]; invoices: Array<Record<string, unknown>>; merchants: unknown[]; idempotency: unknown[] }> {
  return JSON.parse(await readFile(join(sandbox.dataDir, 'sandbox.json'), 'utf8'));
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * Call the sandbox as a merchant, partner or invoice caller: bearer key, signed with the project's
 * signer when a secret is given.
 */
export async function api(
  sandbox: SandboxHandle,
  method: 'GET' | 'POST',
  path: string,
  options: { key?: string; secret?: string; body?: unknown; raw?: string; idempotencyKey?: string; contentType?: string } = {},
): Promise<ApiResponse> {
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  if (options.secret) headers['x-request-signature'] = defaultRequestSigner({ method, path, body: body ?? '', secret: options.secret });
  const response = await fetch(`${sandbox.url}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** A simulation call (no key). */
export function simulate(sandbox: SandboxHandle, path: string, body: unknown = {}): Promise<ApiResponse> {
  return api(sandbox, 'POST', path, { body });
}

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

/** A receiver's answer: a status (body `ok`), or a status and a body (an object is sent as JSON). */
export type ReceiverAnswer = number | { status: number; body: string | object };

/**
 * A real webhook receiver on 127.0.0.1 that keeps the raw body. `respond(n)` gives the answer for
 * the n-th request (1-based) and may delay. @default always 200
 */
export async function startReceiver(respond: (n: number) => ReceiverAnswer | Promise<ReceiverAnswer> = () => 200): Promise<Receiver> {
  const app = Fastify({ forceCloseConnections: true });
  const received: ReceivedWebhook[] = [];
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.post('/hook', async (request, reply) => {
    received.push({ headers: request.headers as Record<string, string>, body: request.body as string, at: Date.now() });
    const answer = await respond(received.length);
    if (typeof answer === 'number') return reply.code(answer).send('ok');
    return reply.code(answer.status).send(answer.body);
  });
  const port = await listenOnLoopback(app);
  return { url: `http://127.0.0.1:${port}/hook`, received, close: () => app.close() };
}

/** Poll `check` until it returns true (or throw after `timeoutMs`). */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const EVM_ADDRESS_RE = /^0x[0-9a-f]{40}$/;
export const TRON_ADDRESS_RE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
export const DECIMAL_RE = /^[0-9]+(\.[0-9]+)?$/;
