import type { Environment } from '../schemas/index.js';

/** A resource the toolkit follows: a payment or an invoice. */
export type ResourceKind = 'payment' | 'invoice';

/**
 * The outcome of a resource (contract.md section 5). `pending` has no handler. Outcomes only move
 * forward by `OUTCOME_RANK`.
 */
export type Outcome = 'pending' | 'underpaid' | 'expired' | 'paid' | 'overpaid';

/** Rank of each outcome: a resource's stored outcome never moves to a lower rank. */
export const OUTCOME_RANK: Record<Outcome, number> = { pending: 0, underpaid: 1, expired: 1, paid: 2, overpaid: 2 };

/** How news of a resource arrived. */
export type NewsSource = 'webhook' | 'reconcile' | 'return' | 'checkout';

/** A verified webhook event as stored. `body` is the raw request body, byte for byte (UTF-8). */
export interface StoredEvent {
  id: string;
  type: string;
  environment: Environment | undefined;
  /** The envelope's `createdAt`. */
  createdAt: string;
  /** When this receiver first stored it. */
  receivedAt: string;
  resourceKind: ResourceKind | undefined;
  resourceId: string | undefined;
  /** Raw body; `undefined` once the payload has been pruned (the id is kept for dedupe). */
  body: string | undefined;
}

/** What `insertEvent` takes: everything but the receive time, which the caller fixes. */
export type NewEvent = StoredEvent;

/**
 * A unit of work claimed with a lease: dispatching one event (`event:<id>`) or running one
 * fulfillment handler (`payment:<id>:paid`). At most one worker holds a run at a time.
 */
export interface Run {
  key: string;
  kind: 'event' | 'fulfillment';
  /** `pending` (due at `nextAttemptAt`), `running` (leased), `done`, `failed` (gave up). */
  status: 'pending' | 'running' | 'done' | 'failed';
  attempts: number;
  /** Owner of the current lease (a process/worker id). */
  owner: string | undefined;
  leaseUntil: string | undefined;
  nextAttemptAt: string;
  lastError: string | undefined;
  /** Free-form, JSON-serialisable details (resource ref, outcome, source). */
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  completedAt: string | undefined;
}

export interface NewRun {
  key: string;
  kind: Run['kind'];
  data: Record<string, unknown>;
  /** @default now */
  nextAttemptAt?: string;
}

/** Per-resource state the fulfillment engine and reconciler keep. */
export interface ResourceRecord {
  kind: ResourceKind;
  id: string;
  environment: Environment | undefined;
  /** The shop's order id, when created through the checkout helper. */
  orderId: string | undefined;
  outcome: Outcome;
  /** Source that first established the current outcome. */
  outcomeSource: NewsSource | undefined;
  /** Latest snapshot fetched from the service (Payment or Invoice detail). */
  snapshot: Record<string, unknown> | undefined;
  /** `expiresAt` of the latest snapshot. */
  expiresAt: string | undefined;
  /** Last time anything was learned about it (event stored or poll made). */
  lastNewsAt: string;
  /** False once no more news is expected (settled, or closed after the late-payment window). */
  open: boolean;
  createdAt: string;
  updatedAt: string;
}

/** What a caller proposes for a resource; the store keeps whatever moves forward. */
export interface ResourceUpdate {
  kind: ResourceKind;
  id: string;
  environment?: Environment | undefined;
  orderId?: string | undefined;
  /** Proposed outcome; ignored when it would move backwards. Omit to only touch `lastNewsAt`. */
  outcome?: Outcome | undefined;
  source?: NewsSource | undefined;
  snapshot?: Record<string, unknown> | undefined;
  expiresAt?: string | undefined;
  open?: boolean | undefined;
}

/** One checkout create attempt per order: written before the request so a retry reuses the key. */
export interface CheckoutAttempt {
  orderId: string;
  kind: ResourceKind;
  idempotencyKey: string;
  /** Hash of the request body: the same order with a different body is refused. */
  requestHash: string;
  status: 'sending' | 'created';
  resourceId: string | undefined;
  checkoutUrl: string | undefined;
  createdAt: string;
  updatedAt: string;
}

/** A delivery that verified but could not be parsed, kept for inspection. */
export interface DeadLetter {
  id: string;
  receivedAt: string;
  reason: string;
  body: string;
  headers: Record<string, string>;
}

export interface EventFilter {
  /** Only events whose dispatch run has this status. */
  status?: Run['status'];
  type?: string;
  /** Only events received at or after this ISO time. */
  since?: string;
  resourceId?: string;
  /** @default 100 */
  limit?: number;
}

export interface RunFilter {
  kind?: Run['kind'];
  status?: Run['status'] | Array<Run['status']>;
  /** Only runs due (nextAttemptAt <= dueBy, or lease expired for running ones). */
  dueBy?: string;
  /** @default 100 */
  limit?: number;
}

export interface ResourceFilter {
  kind?: ResourceKind;
  open?: boolean;
  /** Only resources whose last news is at or before this ISO time. */
  lastNewsBefore?: string;
  /** @default 1000 */
  limit?: number;
}

export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  /** @default new Date() */
  now?: Date;
}

export interface FailOptions {
  error: string;
  /** Retry at this time; omit to mark the run `failed` (given up, retryable by command). */
  retryAt?: string | undefined;
}

export interface PruneOptions {
  /** Drop payloads of events received before this time (ids stay for dedupe). */
  payloadsBefore?: string;
  /** Forget events (ids included) received before this time. Keep ≥ 7 days. */
  eventsBefore?: string;
}

/**
 * The storage seam. The memory, embedded (lowdb + journal) and PostgreSQL stores implement it with
 * the same promises, checked by one contract test suite. Every method that resolves has made its
 * change durable (for the embedded store: fsync'd).
 */
export interface Store {
  /** Human description for logs and `doctor` (never contains credentials). */
  readonly description: string;
  open(): Promise<void>;
  close(): Promise<void>;

  /**
   * Store an event once. Resolves `{ inserted: true }` only for the first delivery of an id, and
   * then has also queued its dispatch run `event:<id>` (same transaction). Durable on resolve.
   */
  insertEvent(event: NewEvent): Promise<{ inserted: boolean }>;
  getEvent(id: string): Promise<StoredEvent | undefined>;
  /** Newest first. */
  listEvents(filter?: EventFilter): Promise<Array<StoredEvent & { run: Run | undefined }>>;
  insertDeadLetter(letter: Omit<DeadLetter, 'id'>): Promise<DeadLetter>;
  listDeadLetters(limit?: number): Promise<DeadLetter[]>;

  /** Insert a run if its key is new; returns the existing run otherwise. */
  enqueueRun(run: NewRun): Promise<{ inserted: boolean; run: Run }>;
  getRun(key: string): Promise<Run | undefined>;
  /**
   * Take a lease on a run that is `pending` and due, or `running` with an expired lease. Returns
   * the claimed run (attempts incremented), or undefined when someone else holds it or it is done.
   */
  claimRun(key: string, options: ClaimOptions): Promise<Run | undefined>;
  /**
   * Extend a lease `owner` still holds, to `now + leaseMs` (the heartbeat of a long handler).
   * Returns false when the lease was lost: taken over after it ran out, or finished.
   */
  renewLease(key: string, owner: string, leaseMs: number, now?: Date): Promise<boolean>;
  /** Mark done; only the lease owner may. Returns false when the lease was lost. */
  completeRun(key: string, owner: string): Promise<boolean>;
  /** Release with an error: back to pending at `retryAt`, or `failed`. Only the lease owner may. */
  failRun(key: string, owner: string, options: FailOptions): Promise<boolean>;
  /** Put a `failed` run back to pending, due now (the `retry` commands). */
  retryRun(key: string): Promise<boolean>;
  listRuns(filter?: RunFilter): Promise<Run[]>;

  /** Apply an update that only moves the outcome forward. Returns the record and whether it advanced. */
  updateResource(update: ResourceUpdate, now?: Date): Promise<{ record: ResourceRecord; advanced: boolean }>;
  getResource(kind: ResourceKind, id: string): Promise<ResourceRecord | undefined>;
  listResources(filter?: ResourceFilter): Promise<ResourceRecord[]>;

  /** Insert the attempt for an order if none exists; returns the stored one either way. */
  putCheckoutAttempt(attempt: Omit<CheckoutAttempt, 'createdAt' | 'updatedAt' | 'status' | 'resourceId' | 'checkoutUrl'>): Promise<{
    inserted: boolean;
    attempt: CheckoutAttempt;
  }>;
  completeCheckoutAttempt(orderId: string, result: { resourceId: string; checkoutUrl: string | undefined }): Promise<CheckoutAttempt>;
  getCheckoutAttempt(orderId: string): Promise<CheckoutAttempt | undefined>;

  /** A named lease, e.g. one reconcile pass at a time. True when acquired. */
  acquireLock(name: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLock(name: string, owner: string): Promise<void>;

  prune(options: PruneOptions): Promise<{ payloadsPruned: number; eventsForgotten: number }>;
}
