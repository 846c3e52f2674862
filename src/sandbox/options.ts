import { isIP } from 'node:net';
import { ConfigError } from '../errors/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { isUuid, type Environment } from '../schemas/index.js';
import { DEFAULT_NETWORKS, type NetworkSpec } from './networks.js';
import { DEFAULT_SANDBOX_DATA } from './data-dir.js';

/** Faults injected into webhook delivery. Probabilities are 0..1; decisions come from a seeded PRNG. */
export interface WebhookFaults {
  /** An event is never delivered to a URL, with this probability. @default 0 */
  drop?: number;
  /** An event is delivered twice to a URL (same `webhook-id`), with this probability. @default 0 */
  duplicate?: number;
  /** Hold events for `reorderWindowMs` and deliver each batch in shuffled order. @default false */
  reorder?: boolean;
  /** @default 250 */
  reorderWindowMs?: number;
  /** Wait this long before the first attempt of every delivery. @default 0 */
  delayMs?: number;
  /** Sign with a timestamp one hour old, with this probability. @default 0 */
  staleTimestamp?: number;
  /** Seed of the fault PRNG, for reproducible runs. @default a random seed (see `SandboxHandle.seed`) */
  seed?: number;
}

/** How failed deliveries (non-2xx, network error, timeout) are retried. */
export interface WebhookRetry {
  /** Delay before the second attempt; doubles each time. @default 200 */
  baseDelayMs?: number;
  /** Attempts in all, the first included. @default 6 */
  maxAttempts?: number;
  /** Per-attempt timeout. @default 2000 */
  timeoutMs?: number;
}

/**
 * Options of `startSandbox`.
 * @example await startSandbox({ dataDir: await mkdtemp(join(tmpdir(), 'sbx-')), webhookUrls: ['http://127.0.0.1:3000/webhooks/checkout'] })
 */
export interface SandboxOptions {
  /** @default 0 (any free port) */
  port?: number;
  /** Loopback only: the simulation endpoints need no key. @default '127.0.0.1' */
  host?: string;
  /** State and `credentials.json` live here. @default '.sandbox' */
  dataDir?: string;
  /** Every event is sent to each URL. @default [] */
  webhookUrls?: string[];
  faults?: WebhookFaults;
  retry?: WebhookRetry;
  /** Lifetime of a new payment or invoice (sets `expiresAt`). @default 1_800_000 (30 minutes) */
  expiresAfterMs?: number;
  /** How often resources past `expiresAt` are checked for expiry. @default 1000 */
  expiryCheckMs?: number;
  /** Extra processing time of every create, which widens the in-flight (409) window. @default 0 */
  createDelayMs?: number;
  /** Networks enabled per environment. @default DEFAULT_NETWORKS (Sepolia, Tron Nile / Ethereum, Tron) */
  networks?: Partial<Record<Environment, NetworkSpec[]>>;
  /** @default silent */
  logger?: Logger;
}

export interface ResolvedOptions {
  port: number;
  host: string;
  dataDir: string;
  webhookUrls: string[];
  faults: Required<WebhookFaults>;
  retry: Required<WebhookRetry>;
  expiresAfterMs: number;
  expiryCheckMs: number;
  createDelayMs: number;
  networks: Record<Environment, NetworkSpec[]>;
  logger: Logger;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function probability(name: string, value: number | undefined): number {
  const p = value ?? 0;
  if (!(p >= 0 && p <= 1)) throw new ConfigError(`${name} must be a probability between 0 and 1, got ${String(value)}.`);
  return p;
}

function nonNegative(name: string, value: number | undefined, fallback: number, min = 0): number {
  const n = value ?? fallback;
  if (!Number.isFinite(n) || n < min) throw new ConfigError(`${name} must be a number >= ${min}, got ${String(value)}.`);
  return n;
}

/** Fill in defaults and check every option up front. */
export function resolveOptions(options: SandboxOptions = {}): ResolvedOptions {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host) && !(isIP(host) === 4 && host.startsWith('127.'))) {
    throw new ConfigError(`The sandbox listens on loopback only (its /sandbox endpoints need no key); use 127.0.0.1, not ${host}.`);
  }
  const port = nonNegative('port', options.port, 0);
  if (!Number.isInteger(port) || port > 65535) throw new ConfigError(`port must be an integer 0..65535, got ${port}.`);
  for (const url of options.webhookUrls ?? []) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new ConfigError(`webhook URL ${url} is not an http(s) URL.`);
  }
  const networks = { test: options.networks?.test ?? DEFAULT_NETWORKS.test, live: options.networks?.live ?? DEFAULT_NETWORKS.live };
  for (const environment of ['test', 'live'] as const) {
    for (const network of networks[environment]) {
      if (!isUuid(network.chainId)) {
        throw new ConfigError(
          `networks.${environment}: chainId ${JSON.stringify(network.chainId)} of ${network.chainName} is not a UUID (spec 2.2); give every network a UUID chainId.`,
        );
      }
    }
  }
  const faults = options.faults ?? {};
  const retry = options.retry ?? {};
  return {
    port,
    host,
    dataDir: options.dataDir ?? DEFAULT_SANDBOX_DATA,
    webhookUrls: [...(options.webhookUrls ?? [])],
    faults: {
      drop: probability('drop', faults.drop),
      duplicate: probability('duplicate', faults.duplicate),
      reorder: faults.reorder ?? false,
      reorderWindowMs: nonNegative('reorderWindowMs', faults.reorderWindowMs, 250),
      delayMs: nonNegative('delayMs', faults.delayMs, 0),
      staleTimestamp: probability('staleTimestamp', faults.staleTimestamp),
      seed: Math.trunc(nonNegative('seed', faults.seed, Math.floor(Math.random() * 2 ** 31))),
    },
    retry: {
      baseDelayMs: nonNegative('retry.baseDelayMs', retry.baseDelayMs, 200),
      maxAttempts: Math.trunc(nonNegative('retry.maxAttempts', retry.maxAttempts, 6, 1)),
      timeoutMs: nonNegative('retry.timeoutMs', retry.timeoutMs, 2000, 1),
    },
    expiresAfterMs: nonNegative('expiresAfterMs', options.expiresAfterMs, 30 * 60_000),
    expiryCheckMs: nonNegative('expiryCheckMs', options.expiryCheckMs, 1000, 10),
    createDelayMs: nonNegative('createDelayMs', options.createDelayMs, 0),
    networks,
    logger: options.logger ?? silentLogger,
  };
}
