import { enqueuedWithEvent } from '../runs/event-run-guard.js';
import { deadLetterOp, StoreState, type EventRecord, type Op } from './state.js';
import type {
  Activity,
  ActivityFilter,
  CheckoutAttempt,
  ClaimOptions,
  DeadLetter,
  EventFilter,
  FailOptions,
  NewActivity,
  NewCheckoutAttempt,
  NewEvent,
  NewRun,
  PruneOptions,
  ResourceFilter,
  ResourceKind,
  ResourceRecord,
  ResourceUpdate,
  Run,
  RunCountFilter,
  RunFilter,
  Store,
  StoredEvent,
  StoreSummary,
} from './types.js';

/**
 * Base of the stores that keep their state in a `StoreState`: every change goes through
 * `commit(op)`, which subclasses make durable (the embedded store journals it).
 */
export abstract class StateStore implements Store {
  abstract readonly description: string;
  protected state = new StoreState();

  abstract open(): Promise<void>;
  abstract close(): Promise<void>;
  /** Apply `op` and make it durable before resolving. Returns the op's value. */
  protected abstract commit<T>(op: Op): Promise<T>;
  /** Bring the in-memory state up to date before a read (other processes may have written). */
  protected refresh(): Promise<void> {
    return Promise.resolve();
  }
  /**
   * Turn the state's event records into events. The embedded store overrides this to read the
   * bodies it keeps outside the state (see `BodyRef`).
   */
  protected async withBodies<E extends EventRecord>(records: E[]): Promise<Array<Omit<E, 'bodyRef'>>> {
    return records.map(({ bodyRef: _bodyRef, ...event }) => event);
  }

  async insertEvent(event: NewEvent, now = new Date()): Promise<{ inserted: boolean }> {
    return this.commit({ t: 'event', at: now.getTime(), event });
  }
  async getEvent(id: string): Promise<StoredEvent | undefined> {
    await this.refresh();
    const record = this.state.getEvent(id);
    if (!record) return undefined;
    const [event] = await this.withBodies([record]);
    return event;
  }
  async listEvents(filter?: EventFilter): Promise<Array<StoredEvent & { run: Run | undefined }>> {
    await this.refresh();
    return this.withBodies(this.state.listEvents(filter));
  }
  async insertDeadLetter(letter: Omit<DeadLetter, 'id'>, now = new Date()): Promise<DeadLetter> {
    return this.commit(deadLetterOp(letter, now.getTime()));
  }
  async listDeadLetters(limit = 100, offset = 0): Promise<DeadLetter[]> {
    await this.refresh();
    return this.state.listDeadLetters(limit, offset);
  }
  async enqueueRun(run: NewRun, now = new Date()): Promise<{ inserted: boolean; run: Run }> {
    // Checked here, not in the op: journals written before the rule still replay.
    return (await enqueuedWithEvent(run, (key) => this.getRun(key))) ?? this.commit({ t: 'enqueue', at: now.getTime(), run });
  }
  async getRun(key: string): Promise<Run | undefined> {
    await this.refresh();
    return this.state.getRun(key);
  }
  async claimRun(key: string, options: ClaimOptions): Promise<Run | undefined> {
    return this.commit({ t: 'claim', at: (options.now ?? new Date()).getTime(), key, owner: options.owner, leaseMs: options.leaseMs });
  }
  async renewLease(key: string, owner: string, leaseMs: number, now = new Date()): Promise<boolean> {
    return this.commit({ t: 'renew', at: now.getTime(), key, owner, leaseMs });
  }
  async completeRun(key: string, owner: string, now = new Date()): Promise<boolean> {
    return this.commit({ t: 'complete', at: now.getTime(), key, owner });
  }
  async failRun(key: string, owner: string, options: FailOptions): Promise<boolean> {
    return this.commit({ t: 'fail', at: (options.now ?? new Date()).getTime(), key, owner, error: options.error, retryAt: options.retryAt });
  }
  async retryRun(key: string, now = new Date()): Promise<boolean> {
    return this.commit({ t: 'retry', at: now.getTime(), key });
  }
  async listRuns(filter?: RunFilter): Promise<Run[]> {
    await this.refresh();
    return this.state.listRuns(filter);
  }
  async countRuns(filter?: RunCountFilter): Promise<number> {
    await this.refresh();
    return this.state.countRuns(filter);
  }
  async updateResource(update: ResourceUpdate, now = new Date()): Promise<{ record: ResourceRecord; advanced: boolean }> {
    return this.commit({ t: 'resource', at: now.getTime(), update });
  }
  async getResource(kind: ResourceKind, id: string): Promise<ResourceRecord | undefined> {
    await this.refresh();
    return this.state.getResource(kind, id);
  }
  async listResources(filter?: ResourceFilter): Promise<ResourceRecord[]> {
    await this.refresh();
    return this.state.listResources(filter);
  }
  async putCheckoutAttempt(attempt: NewCheckoutAttempt, now = new Date()): Promise<{ inserted: boolean; attempt: CheckoutAttempt }> {
    return this.commit({ t: 'attempt', at: now.getTime(), attempt });
  }
  async completeCheckoutAttempt(orderId: string, result: { resourceId: string; checkoutUrl: string | undefined }, now = new Date()): Promise<CheckoutAttempt> {
    const attempt = await this.commit<CheckoutAttempt | undefined>({ t: 'attemptDone', at: now.getTime(), orderId, ...result });
    if (!attempt) throw new Error(`No checkout attempt for order ${orderId}: call putCheckoutAttempt first.`);
    return attempt;
  }
  async releaseCheckoutAttempt(orderId: string, number: number, now = new Date()): Promise<boolean> {
    return this.commit({ t: 'attemptRefused', at: now.getTime(), orderId, number });
  }
  async getCheckoutAttempt(orderId: string): Promise<CheckoutAttempt | undefined> {
    await this.refresh();
    return this.state.getAttempt(orderId);
  }
  async acquireLock(name: string, owner: string, ttlMs: number, now = new Date()): Promise<boolean> {
    return this.commit({ t: 'lock', at: now.getTime(), name, owner, ttlMs });
  }
  async releaseLock(name: string, owner: string, now = new Date()): Promise<void> {
    await this.commit({ t: 'unlock', at: now.getTime(), name, owner });
  }
  async prune({ now = new Date(), ...cutoffs }: PruneOptions): Promise<{ payloadsPruned: number; eventsForgotten: number }> {
    return this.commit({ t: 'prune', at: now.getTime(), ...cutoffs });
  }
  async appendActivity(entry: NewActivity, now = new Date()): Promise<void> {
    await this.commit({ t: 'activity', at: now.getTime(), entry });
  }
  async listActivity(filter: ActivityFilter): Promise<Activity[]> {
    await this.refresh();
    return this.state.listActivity(filter);
  }
  async summarize({ now = new Date() }: { now?: Date } = {}): Promise<StoreSummary> {
    await this.refresh();
    return this.state.summarize(now.getTime());
  }
}
