import { CheckoutKitError, isAbortedBy, messageOf, SchemaValidationError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { executeRun, retryFailed, runKeys, type RunSettings, type Task } from '../runs/index.js';
import { InvoiceDetailSchema, PaymentSchema, type InvoiceDetail, type Payment } from '../schemas/index.js';
import { sameUuid } from '../schemas/common.js';
import { OUTCOME_RANK, type NewsSource, type ResourceKind, type ResourceRecord } from '../store/index.js';
import { unlessStuck } from '../timers/index.js';
import type { EngineObserver, HandlerObservation } from './engine-observer.js';
import { normalizeEngineOptions, type FulfillmentEngineOptions, type NormalizedEngineOptions } from './engine-options.js';
import { handlerFor } from './handlers.js';
import { classify, type Classifiable, type Classification, type HandlerOutcome } from './outcome.js';
import { ReadCoalescer } from './read-coalescer.js';

/** What happened to the handler run for a resource's outcome. */
export type RunResult = 'completed' | 'no-handler' | 'superseded' | 'retrying' | 'failed' | 'already-done' | 'in-progress' | 'queued' | 'none';

/** News of one resource for `engine.process`: which one, where the news came from, and what it carried. */
export interface ProcessInput {
  kind: ResourceKind;
  id: string;
  source: NewsSource;
  /** The resource as an event carried it: used only when not confirming with the service. */
  hint?: unknown;
  orderId?: string | undefined;
  /**
   * The merchant the news speaks for (an event's `data.merchantId`). When a confirmed read says the
   * resource is another merchant's, the news is ignored: nothing is stored, no handler runs. This is
   * what keeps a delivery signed with one tenant's own webhook secret from moving another's payment.
   */
  merchantId?: string | undefined;
  /**
   * When this news was stored (an event's receive time, on the engine's clock). A confirm read
   * of the resource that began at or after it has already confirmed it: no new read is made.
   */
  storedAt?: string | undefined;
  /**
   * Give up the confirm read when this aborts (the receiver stopping): the read rejects with the
   * signal's reason, nothing is stored, and the news is left to whoever dispatches it next.
   */
  signal?: AbortSignal | undefined;
  /**
   * Called from a run loop (the receiver's, through `attachFulfillment`): the handler run is queued
   * and handed to this to run next under its own lease, instead of being run here (`run: 'queued'`).
   */
  runNext?: ((key: string) => void) | undefined;
}

/** What `engine.process` decided: the stored outcome and what became of its handler run. */
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

/**
 * Decides each resource's outcome from its amounts and runs the merchant's handler once per
 * resource and outcome, whatever the source of the news: webhook, the buyer's return, or reconcile.
 */
export class FulfillmentEngine {
  /** The lease owner of the engine's runs (and of reconcile's lock). */
  readonly owner: string;
  /** The engine's clock: pass it to whatever works beside the engine (reconcile does). */
  readonly clock: () => Date;
  /** The engine's logger: reconcile logs there too unless given its own. */
  readonly logger: Logger;
  private readonly options: NormalizedEngineOptions;
  private readonly reads: ReadCoalescer<Payment | InvoiceDetail>;

  /** @throws ConfigError when an option is out of range. */
  constructor(options: FulfillmentEngineOptions) {
    this.options = normalizeEngineOptions(options);
    this.owner = this.options.runs.owner;
    this.clock = this.options.clock;
    this.logger = this.options.logger;
    this.reads = new ReadCoalescer(this.options.coalesceCapacity);
  }

  /**
   * Learn the latest state of one resource, store it (forward only) and run its handler if due.
   * Confirm reads are coalesced per resource (`ReadCoalescer`): news arriving while a read is
   * queued shares it, and news already covered by a read that began after it costs no read.
   */
  async process(input: ProcessInput): Promise<ProcessResult> {
    const read = () => this.read(input.kind, input.id, input.hint, input.signal);
    if (!this.options.confirm) return this.learn(input, read);
    // Webhook news only: the buyer's return reads afresh, and reconcile polls only open resources.
    const finished = input.source === 'webhook' ? await this.finishedInStore(input) : undefined;
    if (finished) return finished;
    const key = `${input.kind}:${input.id}`;
    // The allowance covers clocks of several hosts sharing a store: only a read that clearly began
    // after the news was stored may stand for it.
    if (input.storedAt !== undefined && this.reads.confirmedSince(key, Date.parse(input.storedAt) + this.options.coalesceSkewMs)) {
      const known = await this.fromStore(input);
      if (known) return known;
    }
    let startedAt = 0;
    return this.learn(
      input,
      async () => {
        const shared = await this.reads.read(key, () => this.clock().getTime(), read, input.signal);
        startedAt = shared.startedAt;
        return shared.value;
      },
      () => this.reads.stored(key, startedAt),
    );
  }

  /**
   * A resource settled (paid or overpaid: the top rank, which nothing moves past), closed, and whose
   * handler run for that outcome is done: no news can change what is done about it, so news of it
   * costs no read (a provider's flush re-sends events of payments fulfilled moments or days before;
   * every such event once cost a read of the service's rate-limited budget).
   */
  private async finishedInStore(input: ProcessInput): Promise<ProcessResult | undefined> {
    const record = await this.options.store.getResource(input.kind, input.id);
    if (!record || record.open || OUTCOME_RANK[record.outcome] !== OUTCOME_RANK.paid) return undefined;
    const run = await this.options.store.getRun(runKeys.fulfillment(input.kind, input.id, record.outcome as HandlerOutcome));
    if (run?.status !== 'done') return undefined;
    const known = await this.fromStore(input, record);
    return known && { ...known, run: 'already-done' };
  }

  /** What the store holds of a resource that a later read has already confirmed. */
  private async fromStore(input: ProcessInput, found?: ResourceRecord): Promise<ProcessResult | undefined> {
    const record = found ?? (await this.options.store.getResource(input.kind, input.id));
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
      // Stopping, not the service failing: nothing learned, nothing to record.
      if (isAbortedBy(error, input.signal)) throw error;
      this.observe('news', { ok: false, kind: input.kind, id: input.id, source: input.source, error: messageOf(error), at: this.clock() });
      // The service could not be asked (outage, bad data): make sure reconcile knows the resource,
      // so news of it is not lost once the sender gives up retrying.
      if (!(await this.options.store.getResource(input.kind, input.id))) {
        await this.options.store.updateResource({ kind: input.kind, id: input.id, orderId: input.orderId, source: input.source }, this.clock());
      }
      throw error;
    }
    const now = this.clock();
    const owner = this.confirmedMerchantOf(resource);
    if (input.merchantId !== undefined && owner !== undefined && !sameUuid(owner, input.merchantId)) return this.ignoreForeign(input, owner, resource);
    const classification = classify(resource, { ...this.options.classify, now });
    const pastLateWindow = resource.expiresAt != null && now.getTime() > Date.parse(resource.expiresAt) + this.options.lateWindowMs;
    const settled = classification.outcome === 'paid' || classification.outcome === 'overpaid';
    // One write: the outcome (forward only), its handler run, and the close of a resource settled
    // or past its late window (closed only with its run queued, and never reopened by older news).
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
        open: settled || pastLateWindow ? false : undefined,
      },
      now,
      {
        queue: (decided) =>
          decided.outcome === 'pending'
            ? undefined
            : {
                key: runKeys.fulfillment(input.kind, input.id, decided.outcome),
                kind: 'fulfillment',
                nextAttemptAt: now.toISOString(),
                data: { kind: input.kind, id: input.id, outcome: decided.outcome, source: input.source, late: decided.late ?? classification.late },
              },
      },
    );
    stored?.();
    const late = record.late ?? classification.late;
    this.observe('news', {
      ok: true,
      kind: input.kind,
      id: input.id,
      source: input.source,
      outcome: record.outcome,
      advanced,
      classification: { ...classification, late },
      at: now,
    });
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
      const key = runKeys.fulfillment(input.kind, input.id, record.outcome);
      if (input.runNext) {
        input.runNext(key);
        result.run = 'queued';
      } else {
        result.run = await this.execute(key, resource);
      }
    }
    return result;
  }

  /** News that speaks for another merchant than the resource's: logged and kept in its timeline, nothing else. */
  private async ignoreForeign(input: ProcessInput, owner: string, resource: Payment | InvoiceDetail): Promise<ProcessResult> {
    const message =
      `${input.kind} ${input.id} belongs to merchant ${owner}, but this ${input.source} news speaks for merchant ${input.merchantId}: ` +
      "ignored, nothing changed (an event signed with another tenant's webhook secret, or a forged one)";
    this.logger.warn({ kind: input.kind, id: input.id, merchantId: input.merchantId, owner }, message);
    this.observe('news', { ok: false, kind: input.kind, id: input.id, source: input.source, error: message, ignored: true, at: this.clock() });
    const known = await this.fromStore(input);
    return (
      known ?? {
        kind: input.kind,
        id: input.id,
        outcome: 'pending',
        advanced: false,
        firstLearnedBy: undefined,
        classification: classify(resource, { ...this.options.classify, now: this.clock() }),
        run: 'none',
      }
    );
  }

  /**
   * Run every fulfillment run that is due: retries after a throw, and runs whose worker died. Once
   * `signal` aborts (stopping), no further run is started and a read under way is given up; the
   * runs left stay due for the next sweep.
   */
  async runDue(limit = 100, signal?: AbortSignal): Promise<Record<RunResult, number>> {
    const counts: Record<RunResult, number> = {
      completed: 0,
      'no-handler': 0,
      superseded: 0,
      retrying: 0,
      failed: 0,
      'already-done': 0,
      'in-progress': 0,
      queued: 0,
      none: 0,
    };
    const due = await this.options.store.listRuns({ kind: 'fulfillment', status: ['pending', 'running'], dueBy: this.clock().toISOString(), limit });
    for (const run of due) {
      if (signal?.aborted) break;
      try {
        counts[await this.execute(run.key, undefined, signal)] += 1;
      } catch (error) {
        if (isAbortedBy(error, signal)) break;
        this.logger.warn({ key: run.key, err: error }, 'could not run a due handler run; will try again');
        counts.retrying += 1;
      }
    }
    return counts;
  }

  /**
   * The run loop's task for handler runs (`receiver.runTask('fulfillment', engine.task)`, as
   * `attachFulfillment` does): claim the run, load the resource as it was decided, call the handler.
   */
  readonly task: Task = async (key, context) => {
    const result = await this.execute(key, undefined, context.signal, false);
    return result === 'retrying' ? 'retry' : result === 'failed' ? 'failed' : result === 'in-progress' ? 'skipped' : 'done';
  };

  /** Put failed runs (all of them, or one key) back to pending; returns how many. */
  async retryFailed(key?: string): Promise<number> {
    return retryFailed(this.options.store, { kind: 'fulfillment', key: key || undefined, clock: this.clock });
  }

  /** Tell the observer; what it throws is logged, never the engine's business. */
  private observe<K extends keyof EngineObserver>(name: K, observation: Parameters<NonNullable<EngineObserver[K]>>[0]): void {
    const observer = this.options.observer;
    if (!observer?.[name]) return;
    try {
      (observer[name] as (value: typeof observation) => void)(observation);
    } catch (error) {
      this.logger.warn({ err: error }, `the engine's ${name} observer threw: ${String(error)}`);
    }
  }

  /**
   * Read the resource: from the service when confirming, else from the hint (validated).
   * `hintFirst`: the hint is the resource as stored when its outcome was decided; the service is
   * asked only when it is missing or no longer valid.
   */
  private async read(kind: ResourceKind, id: string, hint: unknown, signal?: AbortSignal, hintFirst = false): Promise<Payment | InvoiceDetail> {
    const schema = kind === 'payment' ? PaymentSchema : InvoiceDetailSchema;
    if (hintFirst) {
      const stored = schema.safeParse(hint);
      if (stored.success && stored.data.id === id) return stored.data;
    }
    if (this.options.confirm && this.options.client) {
      const options = signal ? { signal } : undefined;
      const resource = kind === 'payment' ? await this.options.client.payments.get(id, options) : await this.options.client.invoices.get(id, options);
      // A service that answers with another resource must not fulfil this one with it.
      if (resource.id !== id)
        throw new SchemaValidationError(`${kind} ${id}: the service answered with ${kind} ${resource.id}; nothing was decided (retried later)`, []);
      return resource;
    }
    const parsed = schema.safeParse(hint);
    if (!parsed.success)
      throw new SchemaValidationError(`${kind} ${id}: no valid data to decide from (configure an API key to confirm with the service)`, parsed.error.issues);
    if (parsed.data.id !== id) throw new SchemaValidationError(`${kind} ${id}: the data is for ${parsed.data.id}`, []);
    return parsed.data;
  }

  /** The merchant a confirmed read says the resource belongs to; undefined unconfirmed or when the answer names none. */
  private confirmedMerchantOf(resource: Payment | InvoiceDetail): string | undefined {
    const merchantId = this.options.confirm ? (resource as { merchantId?: unknown }).merchantId : undefined;
    return typeof merchantId === 'string' ? merchantId : undefined;
  }

  /**
   * The merchant a partner's payment belongs to and the tenant onboarded as it: only from what the
   * service answered a confirmed read (its `merchantId`), never from an event's body.
   */
  private async ownerOf(resource: Payment | InvoiceDetail): Promise<{ merchantId?: string; tenantId?: string }> {
    const merchantId = this.confirmedMerchantOf(resource);
    if (merchantId === undefined) return {};
    const tenant = await this.options.store.findTenantByMerchantId(merchantId);
    return tenant ? { merchantId, tenantId: tenant.tenantId } : { merchantId };
  }

  /**
   * Claim the run and call the handler (through `executeRun`); at most one completed call per key.
   * The handler gets `given` (the resource just read), else the resource as stored when decided.
   * `explainSkip`: say why a run that could not be claimed was not (one more read).
   */
  private async execute(key: string, given?: Payment | InvoiceDetail, signal?: AbortSignal, explainSkip = true): Promise<RunResult> {
    const store = this.options.store;
    const logger = this.logger.child?.({ key }) ?? this.logger;
    const runs: RunSettings = { ...this.options.runs, logger };
    /** The handler call under way, once the handler is called: what the observer is told of it. */
    let call: { observed: Omit<HandlerObservation, 'result' | 'error' | 'durationMs' | 'at'>; started: number } | undefined;
    const result = await executeRun<'completed' | 'superseded' | 'no-handler'>(
      store,
      key,
      { ...runs, signal, onLeaseLost: (reason) => logger.warn({ key, reason }, 'lost the lease of a running handler: another worker may run it too') },
      async (claimed) => {
        const data = claimed.data as { kind: ResourceKind; id: string; outcome: HandlerOutcome; source: NewsSource; late: boolean };
        // An older outcome's retry after a newer one (underpaid, then topped up to paid): the order
        // has moved on, so the old handler must not act on it.
        const stored = await store.getResource(data.kind, data.id);
        if (stored && OUTCOME_RANK[stored.outcome] > OUTCOME_RANK[data.outcome]) {
          this.logger.info({ key, now: stored.outcome }, `superseded by ${stored.outcome}: ${data.outcome} handler not called`);
          return { ok: true, value: 'superseded' };
        }
        const handler = handlerFor(this.options.handlers, data.outcome);
        if (!handler) {
          this.logger.info({ key }, `no ${data.outcome} handler: nothing to do`);
          return { ok: true, value: 'no-handler' };
        }
        let resource: Payment | InvoiceDetail;
        try {
          resource = given ?? (await this.read(data.kind, data.id, stored?.snapshot, signal, true));
        } catch (error) {
          if (isAbortedBy(error, signal)) throw error;
          return { ok: false, error };
        }
        // Fixed when the resource was first paid: a top-up after expiry does not make it late.
        const late = stored?.late ?? data.late;
        let owner: { merchantId?: string; tenantId?: string };
        try {
          owner = await this.ownerOf(resource);
        } catch (error) {
          return { ok: false, error };
        }
        call = {
          observed: { key, kind: data.kind, id: data.id, outcome: data.outcome, source: data.source, attempt: claimed.attempts },
          started: performance.now(),
        };
        try {
          // A handler whose promise nothing can settle would let `reconcile` exit 0 mid-pass, its run still claimed.
          await unlessStuck(
            (async () =>
              handler(resource, {
                kind: data.kind,
                outcome: data.outcome,
                key,
                source: data.source,
                late,
                attempt: claimed.attempts,
                classification: { ...classify(resource, { ...this.options.classify, now: this.clock() }), late },
                ...owner,
                logger,
              }))(),
            () => new HandlerNeverSettledError(data.outcome, key),
          );
        } catch (error) {
          // One taken for stuck may still act (it waited on an unref'd handle): no automatic second call.
          return { ok: false, error, giveUp: error instanceof HandlerNeverSettledError };
        }
        return { ok: true, value: 'completed' };
      },
    );
    const observe = (outcome: HandlerObservation['result'], error: unknown) => {
      if (call)
        this.observe('handler', {
          ...call.observed,
          result: outcome,
          error: error === undefined ? undefined : messageOf(error),
          durationMs: performance.now() - call.started,
          at: this.clock(),
        });
    };
    switch (result.status) {
      case 'stopped':
        throw signal?.reason ?? new Error('stopped');
      case 'not-claimed': {
        if (!explainSkip) return 'in-progress';
        const run = await store.getRun(key);
        return run?.status === 'done' ? 'already-done' : run?.status === 'failed' ? 'failed' : 'in-progress';
      }
      case 'finished':
        if (result.completion === 'lease-lost')
          logger.warn({ key }, 'handler finished after its lease expired; another worker may have run it too: raise leaseMs');
        if (result.value === 'completed') observe('completed', undefined);
        return result.value;
      case 'retrying':
        this.logger.warn({ key, attempt: result.run.attempts, retryAt: result.retryAt, err: result.error }, 'handler threw; will retry');
        observe('retrying', result.error);
        return 'retrying';
      case 'failed':
        this.logger.error({ key, attempts: result.run.attempts, err: result.error }, 'handler failed for good; retry with `checkout-kit retry`');
        observe('failed', result.error);
        return 'failed';
    }
  }
}

/**
 * A handler returned a promise that nothing left running could settle: the process had nothing else
 * to do while it waited. The run fails for good at once, left for `checkout-kit retry`: a handler
 * that waited only on an unref'd timer or socket may still act, and must not be called again unasked.
 */
class HandlerNeverSettledError extends CheckoutKitError {
  override name = 'HandlerNeverSettledError';
  constructor(outcome: HandlerOutcome, key: string) {
    super(
      `the ${outcome} handler never settled for ${key}: it returned a promise that nothing left running can resolve or reject (one never resolved, a callback never called). Make it resolve once its work is done, or throw; the run is marked failed, and \`checkout-kit retry ${key}\` runs it again.`,
    );
  }
}
