import { ConfigError } from '../errors/index.js';
import { defaultLogger, type Logger } from '../log/index.js';
import { COMPLETION_RETRIES, defaultOwner, numberOption, type RunSettings } from '../runs/index.js';
import type { InvoiceDetail, Payment } from '../schemas/index.js';
import type { Store } from '../store/index.js';
import type { EngineObserver } from './engine-observer.js';
import type { FulfillmentHandlers } from './handlers.js';
import type { ClassifyOptions } from './outcome.js';

/** The reads the engine needs from the service; `CheckoutClient` fits. */
export interface ResourceReader {
  /** The service's payments. */
  payments: {
    /** Read a payment as the service has it now. */
    get(id: string, options?: { signal?: AbortSignal }): Promise<Payment>;
  };
  /** The service's invoices. */
  invoices: {
    /** Read an invoice, with its payments, as the service has it now. */
    get(id: string, options?: { signal?: AbortSignal }): Promise<InvoiceDetail>;
  };
}

/**
 * @example
 * new FulfillmentEngine({ store, client, handlers: await loadHandlers(undefined), logger })
 */
export interface FulfillmentEngineOptions {
  store: Store;
  handlers: FulfillmentHandlers;
  /** Reads the resource before deciding (a webhook is only a hint). */
  client?: ResourceReader | undefined;
  /**
   * Re-read every resource from the service before deciding. Turn off only where no API key is
   * configured: then the (verified) event's data is trusted.
   * @default true when `client` is given
   */
  confirm?: boolean;
  /** @default {} (exact amounts, `DEFAULT_STATUS_MAP`) */
  classify?: Omit<ClassifyOptions, 'now'>;
  /** Lease owner id. @default `${hostname}:${pid}:${random}` (`defaultOwner()`) */
  owner?: string;
  /** How long a handler call may run before another worker may take it over (renewed while it runs). @default 300000 */
  leaseMs?: number;
  /** Calls before a throwing handler is marked failed. @default 8 */
  maxAttempts?: number;
  /** First retry delay after a throw, doubling up to `maxBackoffMs`. @default 2000 */
  backoffMs?: number;
  /** Longest retry delay after a throw. @default 3600000 (one hour) */
  maxBackoffMs?: number;
  /** How long after expiry an unpaid resource is still polled for late money. @default 604800000 (7 days) */
  lateWindowMs?: number;
  /**
   * Further tries at storing a run's completion after its handler returned, when the store
   * fails (a connection reset, a failed write). The lease stays renewed meanwhile: a completion
   * that is not stored makes the handler run again once the lease runs out. @default 5
   */
  completionRetries?: number;
  /** First delay between completion tries, doubling. @default 100 */
  completionRetryMs?: number;
  /** Resources whose last confirm read is remembered, to skip reads for news it already covered. @default 50000 */
  coalesceCapacity?: number;
  /**
   * How much later than the news a read must have begun to stand for it without a read of its
   * own (clock differences between hosts sharing a store; raise it where they differ more). @default 250
   */
  coalesceSkewMs?: number;
  /** @default defaultLogger() (JSON lines on stderr, secrets redacted), as the receiver's */
  logger?: Logger;
  /** Told of each piece of news and each handler call (metrics, alerts, the console's timeline). @default none */
  observer?: EngineObserver | undefined;
  /**
   * The one clock of everything the engine decides and stores (outcomes, leases, due times);
   * reconcile and the checkout routes use it too. @default () => new Date()
   */
  clock?: () => Date;
}

export interface NormalizedEngineOptions {
  store: Store;
  handlers: FulfillmentHandlers;
  client: ResourceReader | undefined;
  /** Confirm with the service: asked for (or defaulted) and a client to do it. */
  confirm: boolean;
  classify: Omit<ClassifyOptions, 'now'>;
  /** How handler runs are claimed, kept, retried and given up (`executeRun`). */
  runs: RunSettings;
  lateWindowMs: number;
  coalesceCapacity: number;
  coalesceSkewMs: number;
  logger: Logger;
  observer: EngineObserver | undefined;
  clock: () => Date;
}

const DAY_MS = 86_400_000;

/** Defaults applied and values checked up front, so a bad option fails when the engine is built, not mid-handler. */
export function normalizeEngineOptions(options: FulfillmentEngineOptions): NormalizedEngineOptions {
  const number = (name: keyof FulfillmentEngineOptions, value: number | undefined, fallback: number, minimum = 1) =>
    numberOption('Engine', name, value ?? fallback, minimum);
  // Checked here, or a JavaScript caller's missing store or handlers fails mid-run as a TypeError.
  if (typeof (options.store as Partial<Store> | undefined)?.getResource !== 'function') {
    throw new ConfigError('FulfillmentEngine needs a store: pass { store: await openStore(config.store) } (or a Store of your own).');
  }
  if (options.handlers === null || typeof options.handlers !== 'object') {
    throw new ConfigError(
      'FulfillmentEngine needs handlers: an object with any of paid, overpaid, underpaid, expired (loadHandlers() reads them from the fulfillment module).',
    );
  }
  const logger = options.logger ?? defaultLogger();
  const clock = options.clock ?? (() => new Date());
  return {
    store: options.store,
    handlers: options.handlers,
    client: options.client,
    confirm: (options.confirm ?? options.client !== undefined) && options.client !== undefined,
    classify: options.classify ?? {},
    runs: {
      owner: options.owner ?? defaultOwner(),
      leaseMs: number('leaseMs', options.leaseMs, 300_000),
      maxAttempts: number('maxAttempts', options.maxAttempts, 8),
      backoffMs: number('backoffMs', options.backoffMs, 2000, 0),
      maxBackoffMs: number('maxBackoffMs', options.maxBackoffMs, 3_600_000, 0),
      completionRetries: number('completionRetries', options.completionRetries, COMPLETION_RETRIES.completionRetries, 0),
      completionRetryMs: number('completionRetryMs', options.completionRetryMs, COMPLETION_RETRIES.completionRetryMs, 0),
      clock,
      logger,
    },
    lateWindowMs: number('lateWindowMs', options.lateWindowMs, 7 * DAY_MS, 0),
    coalesceCapacity: number('coalesceCapacity', options.coalesceCapacity, 50_000, 0),
    coalesceSkewMs: number('coalesceSkewMs', options.coalesceSkewMs, 250, 0),
    logger,
    observer: options.observer,
    clock,
  };
}
