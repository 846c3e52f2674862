import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import pRetry from 'p-retry';
import { SchemaValidationError } from '../errors/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { InvoiceDetailSchema, PaymentSchema, type InvoiceDetail, type Payment } from '../schemas/index.js';
import { keepLease, OUTCOME_RANK, type NewsSource, type ResourceKind, type ResourceRecord, type Run, type Store } from '../store/index.js';
import type { EngineObserver } from './engine-observer.js';
import { handlerFor, type FulfillmentHandlers } from './handlers.js';
import { classify, fulfillmentKey, type Classifiable, type ClassifyOptions, type Classification, type HandlerOutcome } from './outcome.js';
import { ReadCoalescer } from './read-coalescer.js';
import { every } from '../timers/index.js';

/** The reads the engine needs from the service; `CheckoutClient` fits. */
export interface ResourceReader {
  payments: { get(id: string): Promise<Payment> };
  invoices: { get(id: string): Promise<InvoiceDetail> };
}

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
  classify?: Omit<ClassifyOptions, 'now'>;
  /** Lease owner id. @default `${hostname}:${pid}:${random}` */
  owner?: string;
  /** How long a handler call may run before another worker may take it over. @default 300000 */
  leaseMs?: number;
  /** Calls before a throwing handler is marked failed. @default 8 */
  maxAttempts?: number;
  /** First retry delay after a throw, doubling, capped at one hour. @default 2000 */
  backoffMs?: number;
  /** How long after expiry an unpaid resource is still polled for late money. @default 7 days */
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
  logger?: Logger;
  /** Told of each piece of news and each handler call (metrics, alerts, the console's timeline). @default none */
  observer?: EngineObserver | undefined;
  /**
   * The one clock of everything the engine decides and stores (outcomes, leases, due times);
   * reconcile and the checkout routes use it too. @default () => new Date()
   */
  clock?: () => Date;
}

/** What happened to the handler run for a resource's outcome. */
export type RunResult = 'completed' | 'no-handler' | 'superseded' | 'retrying' | 'failed' | 'already-done' | 'in-progress' | 'none';

export interface ProcessInput {
  kind: ResourceKind;
  id: string;
  source: NewsSource;
  /** The resource as an event carried it: used only when not confirming with the service. */
  hint?: unknown;
  orderId?: string | undefined;
  /**
   * When this news was stored (an event's receive time, on the engine's clock). A confirm read
   * of the resource that began at or after it has already confirmed it: no new read is made.
   */
  storedAt?: string | undefined;
}

export interface ProcessResult {
  kind: ResourceKind;
  id: string;
  /** The stored outcome after this news (never behind what was stored before). */
  outcome: ResourceRecord['outcome'];
  /** Whether this news moved the outcome forward. */
  advanced: boolean;
  /** The outcome was first learned from this source (e.g. reconcile = missed by webhooks). */
  firstLearnedBy: NewsSource | undefined;
  classification: Classification;
  run: RunResult;
}

export const defaultOwner = () => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * Decides each resource's outcome from its amounts and runs the merchant's handler once per
 * resource and outcome, whatever the source of the news: webhook, the buyer's return, or reconcile.
 */
export class FulfillmentEngine {
  readonly owner: string;
  /** The engine's clock: pass it to whatever works beside the engine (reconcile does). */
  readonly clock: () => Date;
  private readonly options: FulfillmentEngineOptions;
  private readonly confirm: boolean;
  private readonly reads: ReadCoalescer<Payment | InvoiceDetail>;
  private readonly coalesceSkewMs: number;
  private readonly logger: Logger;

  constructor(options: FulfillmentEngineOptions) {
    this.options = options;
    this.owner = options.owner ?? defaultOwner();
    this.confirm = options.confirm ?? options.client !== undefined;
    this.reads = new ReadCoalescer(options.coalesceCapacity ?? 50_000);
    this.coalesceSkewMs = options.coalesceSkewMs ?? 250;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? (() => new Date());
  }

  /**
   * Learn the latest state of one resource, store it (forward only) and run its handler if due.
   * Confirm reads are coalesced per resource (`ReadCoalescer`): news arriving while a read is
   * queued shares it, and news already covered by a read that began after it costs no read.
   */
  async process(input: ProcessInput): Promise<ProcessResult> {
    const read = () => this.read(input.kind, input.id, input.hint);
    if (!this.confirming) return this.learn(input, read);
    const key = `${input.kind}:${input.id}`;
    // The allowance covers clocks of several hosts sharing a store: only a read that clearly began
    // after the news was stored may stand for it.
    if (input.storedAt !== undefined && this.reads.confirmedSince(key, Date.parse(input.storedAt) + this.coalesceSkewMs)) {
      const known = await this.fromStore(input);
      if (known) return known;
    }
    let startedAt = 0;
    return this.learn(
      input,
      async () => {
        const shared = await this.reads.read(key, () => this.clock().getTime(), read);
        startedAt = shared.startedAt;
        return shared.value;
      },
      () => this.reads.stored(key, startedAt),
    );
  }

  /** What the store holds of a resource that a later read has already confirmed. */
  private async fromStore(input: ProcessInput): Promise<ProcessResult | undefined> {
    const record = await this.options.store.getResource(input.kind, input.id);
    if (!record?.snapshot) return undefined;
    const classification = classify(record.snapshot as unknown as Classifiable, { ...this.options.classify, now: this.clock() });
    return {
      kind: input.kind,
      id: input.id,
      outcome: record.outcome,
      advanced: false,
      firstLearnedBy: undefined,
      classification: { ...classification, late: record.late ?? classification.late },
      run: 'none',
    };
  }

  /**
   * Read (through `read`), classify, store forward-only, queue and run the handler. `stored` is
   * told once the answer and its run are stored, so that later news it covers needs no read.
   */
  private async learn(input: ProcessInput, read: () => Promise<Payment | InvoiceDetail>, stored?: () => void): Promise<ProcessResult> {
    let resource: Payment | InvoiceDetail;
    try {
      resource = await read();
    } catch (error) {
      this.observe('news', { ok: false, kind: input.kind, id: input.id, source: input.source, error: (error as Error).message, at: this.clock() });
      // The service could not be asked (outage, bad data): make sure reconcile knows the resource,
      // so news of it is not lost once the sender gives up retrying.
      if (!(await this.options.store.getResource(input.kind, input.id))) {
        await this.options.store.updateResource({ kind: input.kind, id: input.id, orderId: input.orderId, source: input.source }, this.clock());
      }
      throw error;
    }
    const now = this.clock();
    const classification = classify(resource, { ...this.options.classify, now });
    const pastLateWindow =
      resource.expiresAt != null && now.getTime() > Date.parse(resource.expiresAt) + (this.options.lateWindowMs ?? 7 * 86_400_000);
    const settled = classification.outcome === 'paid' || classification.outcome === 'overpaid';
    const { record, advanced } = await this.options.store.updateResource(
      {
        kind: input.kind,
        id: input.id,
        environment: resource.environment,
        orderId: input.orderId,
        outcome: classification.outcome,
        source: input.source,
        late: classification.late,
        snapshot: resource,
        expiresAt: resource.expiresAt ?? undefined,
      },
      now,
    );
    const late = record.late ?? classification.late;
    this.observe('news', { ok: true, kind: input.kind, id: input.id, source: input.source, outcome: record.outcome, advanced, classification: { ...classification, late }, at: now });
    const result: ProcessResult = {
      kind: input.kind,
      id: input.id,
      outcome: record.outcome,
      advanced,
      firstLearnedBy: advanced ? input.source : undefined,
      classification: { ...classification, late },
      run: 'none',
    };
    if (record.outcome !== 'pending') {
      const key = fulfillmentKey(input.kind, input.id, record.outcome);
      await this.options.store.enqueueRun(
        {
          key,
          kind: 'fulfillment',
          nextAttemptAt: now.toISOString(),
          data: { kind: input.kind, id: input.id, outcome: record.outcome, source: input.source, late },
        },
        now,
      );
      stored?.();
      result.run = await this.execute(key, resource);
    } else {
      stored?.();
    }
    // Closed only once its run is queued (a crash in between must leave it open for reconcile),
    // and never reopened by older news.
    if (record.open && (settled || pastLateWindow)) await this.options.store.updateResource({ kind: input.kind, id: input.id, open: false }, this.clock());
    return result;
  }

  /** Run every fulfillment run that is due: retries after a throw, and runs whose worker died. */
  async runDue(limit = 100): Promise<Record<RunResult, number>> {
    const counts: Record<RunResult, number> = { completed: 0, 'no-handler': 0, superseded: 0, retrying: 0, failed: 0, 'already-done': 0, 'in-progress': 0, none: 0 };
    const due = await this.options.store.listRuns({ kind: 'fulfillment', status: ['pending', 'running'], dueBy: this.clock().toISOString(), limit });
    for (const run of due) {
      const { kind, id } = run.data as { kind: ResourceKind; id: string };
      try {
        const resource = await this.read(kind, id, (await this.options.store.getResource(kind, id))?.snapshot);
        counts[await this.execute(run.key, resource)] += 1;
      } catch (error) {
        this.logger.warn({ key: run.key, error: (error as Error).message }, 'could not re-read the resource of a due run; will try again');
        counts.retrying += 1;
      }
    }
    return counts;
  }

  /**
   * Run due runs every `everyMs` in the background (never two sweeps at once; the timer does not
   * keep the process alive). Returns a function that stops it and resolves once a sweep in progress has finished.
   */
  startDueRuns(everyMs = 5000): () => Promise<void> {
    return every(
      everyMs,
      () => this.runDue(),
      (error) => this.logger.error({ error: (error as Error).message }, 'due fulfillment runs failed'),
    );
  }

  /** Put failed runs (all, or one key) back to pending; returns how many. */
  async retryFailed(key?: string): Promise<number> {
    const keys = key ? [key] : (await this.options.store.listRuns({ kind: 'fulfillment', status: 'failed', limit: 10_000 })).map((run) => run.key);
    let count = 0;
    for (const k of keys) if (await this.options.store.retryRun(k, this.clock())) count += 1;
    return count;
  }

  /** Tell the observer; what it throws is logged, never the engine's business. */
  private observe<K extends keyof EngineObserver>(name: K, observation: Parameters<NonNullable<EngineObserver[K]>>[0]): void {
    const observer = this.options.observer;
    if (!observer?.[name]) return;
    try {
      (observer[name] as (value: typeof observation) => void)(observation);
    } catch (error) {
      this.logger.warn({ err: String(error) }, `the engine's ${name} observer threw: ${String(error)}`);
    }
  }

  private get confirming(): boolean {
    return this.confirm && this.options.client !== undefined;
  }

  /** Read the resource: from the service when confirming, else from the hint (validated). */
  private async read(kind: ResourceKind, id: string, hint: unknown): Promise<Payment | InvoiceDetail> {
    if (this.confirming && this.options.client) {
      const resource = kind === 'payment' ? await this.options.client.payments.get(id) : await this.options.client.invoices.get(id);
      // A service that answers with another resource must not fulfil this one with it.
      if (resource.id !== id) throw new SchemaValidationError(`${kind} ${id}: the service answered with ${kind} ${resource.id}; nothing was decided (retried later)`, []);
      return resource;
    }
    const schema = kind === 'payment' ? PaymentSchema : InvoiceDetailSchema;
    const parsed = schema.safeParse(hint);
    if (!parsed.success) throw new SchemaValidationError(`${kind} ${id}: no valid data to decide from (configure an API key to confirm with the service)`, parsed.error.issues);
    if (parsed.data.id !== id) throw new SchemaValidationError(`${kind} ${id}: the data is for ${parsed.data.id}`, []);
    return parsed.data;
  }

  /** Claim the run and call the handler; at most one completed call per key. */
  private async execute(key: string, resource: Payment | InvoiceDetail): Promise<RunResult> {
    const store = this.options.store;
    const leaseMs = this.options.leaseMs ?? 300_000;
    const claimed = await store.claimRun(key, { owner: this.owner, leaseMs, now: this.clock() });
    if (!claimed) {
      const run = await store.getRun(key);
      return run?.status === 'done' ? 'already-done' : run?.status === 'failed' ? 'failed' : 'in-progress';
    }
    const data = claimed.data as { kind: ResourceKind; id: string; outcome: HandlerOutcome; source: NewsSource; late: boolean };
    // An older outcome's retry after a newer one (underpaid, then topped up to paid): the order
    // has moved on, so the old handler must not act on it.
    const stored = await store.getResource(data.kind, data.id);
    if (stored && OUTCOME_RANK[stored.outcome] > OUTCOME_RANK[data.outcome]) {
      await store.completeRun(key, this.owner, this.clock());
      this.logger.info({ key, now: stored.outcome }, `superseded by ${stored.outcome}: ${data.outcome} handler not called`);
      return 'superseded';
    }
    const handler = handlerFor(this.options.handlers, data.outcome);
    if (!handler) {
      await store.completeRun(key, this.owner, this.clock());
      this.logger.info({ key }, `no ${data.outcome} handler: nothing to do`);
      return 'no-handler';
    }
    const logger = this.logger.child?.({ key }) ?? this.logger;
    // Fixed when the resource was first paid: a top-up after expiry does not make it late.
    const late = stored?.late ?? data.late;
    const stopRenewing = keepLease({
      store,
      key,
      owner: this.owner,
      leaseMs,
      clock: this.clock,
      onLost: (reason) => logger.warn({ key, reason }, 'lost the lease of a running handler: another worker may run it too'),
    });
    const started = performance.now();
    const observed = { key, kind: data.kind, id: data.id, outcome: data.outcome, source: data.source, attempt: claimed.attempts };
    try {
      try {
        await handler(resource, {
          kind: data.kind,
          outcome: data.outcome,
          key,
          source: data.source,
          late,
          attempt: claimed.attempts,
          classification: { ...classify(resource, { ...this.options.classify, now: this.clock() }), late },
          logger,
        });
      } catch (error) {
        const result = await this.recordFailure(claimed, error);
        this.observe('handler', { ...observed, result: result === 'failed' ? 'failed' : 'retrying', error: error instanceof Error ? error.message : String(error), durationMs: performance.now() - started, at: this.clock() });
        return result;
      }
      // Still under the renewed lease: a completion that fails is tried again before the lease
      // can run out, so a passing store error never calls the handler a second time.
      await this.storeCompletion(key, logger);
      this.observe('handler', { ...observed, result: 'completed', error: undefined, durationMs: performance.now() - started, at: this.clock() });
      return 'completed';
    } finally {
      stopRenewing();
    }
  }

  /**
   * Mark the run done after its handler returned, retrying a failing store with backoff. Only
   * when every try fails does the run stay leased; its handler then runs again after the lease.
   */
  private async storeCompletion(key: string, logger: Logger): Promise<void> {
    const store = this.options.store;
    let tries = 0;
    try {
      const held = await pRetry(
        async () => {
          tries += 1;
          if (await store.completeRun(key, this.owner, this.clock())) return true;
          // A retry after a write that landed but whose answer was lost finds the run done.
          return tries > 1 && (await store.getRun(key))?.status === 'done';
        },
        {
          retries: this.options.completionRetries ?? 5,
          minTimeout: this.options.completionRetryMs ?? 100,
          factor: 2,
          onFailedAttempt: ({ error, attemptNumber, retriesLeft }) =>
            logger.warn({ key, err: error, attempt: attemptNumber, retriesLeft }, 'could not store the completion of a handler that returned; trying again'),
        },
      );
      if (!held) logger.warn({ key }, 'handler finished after its lease expired; another worker may have run it too: raise leaseMs');
    } catch (error) {
      logger.error(
        { key, err: error, tries },
        `handler returned but its completion could not be stored after ${tries} tries: it will be called again for ${key} once its lease runs out. ` +
          'Check the store; `checkout-kit runs` shows the run.',
      );
    }
  }

  private async recordFailure(run: Run, error: unknown): Promise<RunResult> {
    const message = error instanceof Error ? error.message : String(error);
    const maxAttempts = this.options.maxAttempts ?? 8;
    if (run.attempts >= maxAttempts) {
      await this.options.store.failRun(run.key, this.owner, { error: message, now: this.clock() });
      this.logger.error({ key: run.key, attempts: run.attempts, error: message }, 'handler failed for good; retry with `checkout-kit retry`');
      return 'failed';
    }
    const delay = Math.min((this.options.backoffMs ?? 2000) * 2 ** (run.attempts - 1), 3_600_000);
    const retryAt = new Date(this.clock().getTime() + delay).toISOString();
    await this.options.store.failRun(run.key, this.owner, { error: message, retryAt, now: this.clock() });
    this.logger.warn({ key: run.key, attempt: run.attempts, retryAt, error: message }, 'handler threw; will retry');
    return 'retrying';
  }
}
