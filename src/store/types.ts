import type { NewsSource, Outcome, ResourceKind, RunStatus } from '../domain/index.js';
import type { Environment, Merchant } from '../schemas/index.js';

export type { ResourceKind, Outcome, NewsSource, RunStatus } from '../domain/index.js';
export { OUTCOME_RANK } from '../domain/index.js';

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

/** What `insertEvent` takes. */
export type NewEvent = StoredEvent;

/**
 * A unit of work claimed with a lease: dispatching one event (`event:<id>`) or running one
 * fulfillment handler (`payment:<id>:paid`). At most one worker holds a run at a time.
 */
export interface Run {
  key: string;
  kind: 'event' | 'fulfillment';
  /** `pending` (due at `nextAttemptAt`), `running` (leased), `done`, `failed` (gave up). */
  status: RunStatus;
  attempts: number;
  /** Of `attempts`, those that failed only because the service could not be asked (`FailOptions.outage`): they never count toward giving up. */
  outageAttempts: number;
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

/** What `enqueueRun` takes: the run is due at `nextAttemptAt`, or at `now` when that is omitted. */
export type NewRun = Pick<Run, 'key' | 'kind' | 'data'> & { nextAttemptAt?: string };

/** Per-resource state the fulfillment engine and reconciler keep. */
export interface ResourceRecord {
  kind: ResourceKind;
  id: string;
  environment: Environment | undefined;
  /** The shop's order id: the checkout helper's, else the service's `referenceId` (as POST /checkout sends it). */
  orderId: string | undefined;
  outcome: Outcome;
  /** Source that first established the current outcome. */
  outcomeSource: NewsSource | undefined;
  /** Whether the amount was first reached after `expiresAt`: fixed by the news that first made it paid or overpaid; undefined while not paid. */
  late: boolean | undefined;
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
  /** Whether this news shows the amount reached after expiry; kept only when it moves the outcome to paid or overpaid. */
  late?: boolean | undefined;
  snapshot?: Record<string, unknown> | undefined;
  expiresAt?: string | undefined;
  open?: boolean | undefined;
}

/** What else `updateResource` does in the update's transaction. */
export interface ResourceUpdateOptions {
  /**
   * The run to queue in the same transaction, given the record as the update left it (undefined: none);
   * one already queued under its key stays. So an outcome and its handler run are stored together.
   */
  queue?: ((record: ResourceRecord) => NewRun | undefined) | undefined;
}

/**
 * The order's current checkout create attempt: written before the request so a retry reuses the
 * key. A create the service refused for good is `refused`; the order's next attempt replaces it
 * with `number + 1` and a new Idempotency-Key (the service may remember the old key's body).
 */
export interface CheckoutAttempt {
  orderId: string;
  kind: ResourceKind;
  /** 1 for the order's first attempt, one more after each refusal. */
  number: number;
  idempotencyKey: string;
  /** Hash of the request body: the same order with a different body is refused while this attempt stands. */
  requestHash: string;
  status: 'sending' | 'created' | 'refused';
  resourceId: string | undefined;
  checkoutUrl: string | undefined;
  createdAt: string;
  updatedAt: string;
}

/** What `putCheckoutAttempt` takes. `number` defaults to 1. */
export type NewCheckoutAttempt = Pick<CheckoutAttempt, 'orderId' | 'kind' | 'idempotencyKey' | 'requestHash'> & { number?: number };

/**
 * A partner platform's tenant and the merchant the service made for it (one per tenant and
 * environment), written before the create call with its Idempotency-Key: onboarding a tenant twice,
 * concurrently or after a crash makes one merchant. Refusals are handled as `CheckoutAttempt`'s.
 */
export interface TenantMerchant {
  /** The platform's own id of the tenant (the service's `externalTenantId`). */
  tenantId: string;
  environment: Environment;
  /** 1 for the tenant's first try, one more after each refusal. */
  number: number;
  idempotencyKey: string;
  /** Hash of the create request's body: the same tenant with other details is refused while this try stands. */
  requestHash: string;
  status: 'sending' | 'created' | 'refused';
  name: string;
  email: string;
  /** The service's merchant, once created. */
  merchantId: string | undefined;
  /** The merchant as the service answered its creation. */
  snapshot: Merchant | undefined;
  createdAt: string;
  updatedAt: string;
}

/** What `putTenantMerchant` takes. `number` defaults to 1. */
export type NewTenantMerchant = Pick<TenantMerchant, 'tenantId' | 'environment' | 'idempotencyKey' | 'requestHash' | 'name' | 'email'> & { number?: number };

/**
 * A tenant's own credentials at the service (merchant key, signing secret, webhook secret), sealed
 * with the platform's `CHECKOUT_SECRETS_KEY`, in a table of their own so nothing listing tenants shows them.
 */
export interface SealedTenantCredentials {
  tenantId: string;
  environment: Environment;
  sealed: string;
  /** Id of the key that sealed them: a key rotation re-seals those of an older key. */
  keyId: string;
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

/** Which events `listEvents` lists. */
export interface EventFilter {
  /** Only events whose dispatch run has this status. */
  status?: Run['status'];
  type?: string;
  /** Only events received at or after this ISO time. */
  since?: string;
  resourceId?: string;
  /** @default 100 */
  limit?: number;
  /** Skip this many matches first (paging, as the console does). @default 0 */
  offset?: number;
}

/** Which runs `listRuns` lists. */
export interface RunFilter {
  /** One kind, or any of several. */
  kind?: Run['kind'] | ReadonlyArray<Run['kind']>;
  status?: Run['status'] | Array<Run['status']>;
  /** Only runs due (nextAttemptAt <= dueBy, or lease expired for running ones). */
  dueBy?: string;
  /** @default 100 */
  limit?: number;
  /** Skip this many matches first (paging). @default 0 */
  offset?: number;
  /** Newest first instead of creation order. @default false */
  newestFirst?: boolean;
}

/** Which runs `countRuns` counts: a `RunFilter` without its paging. */
export type RunCountFilter = Pick<RunFilter, 'kind' | 'status' | 'dueBy'>;

/** Which resources `listResources` lists. */
export interface ResourceFilter {
  kind?: ResourceKind;
  open?: boolean;
  /** Only resources whose last news is at or before this ISO time. */
  lastNewsBefore?: string;
  /** Only resources whose current outcome was first learned from this source (`reconcile`: missed by webhooks). */
  outcomeSource?: NewsSource;
  /** @default 1000 */
  limit?: number;
  /** Skip this many matches first (paging). @default 0 */
  offset?: number;
  /** Newest first (by when the store first saw them) instead of oldest first. @default false */
  newestFirst?: boolean;
}

/** How a resource's handler stands: the status of its current outcome's run, `none` without one (pending, or not queued yet). */
export type HandlerState = Run['status'] | 'none';

/** What the operator's search and lists ask for; every field narrows. Newest first. */
export interface ResourceSearch {
  kind?: ResourceKind;
  /**
   * Exact match on the resource's id, its order id, its e-mail (in any case) or the id of one of its events,
   * as given or without the spaces around it (a pasted id brings them; an order id may hold them).
   */
  find?: string;
  outcome?: Outcome;
  handler?: HandlerState;
  open?: boolean;
  /** Only resources whose current outcome was first learned from this source. */
  outcomeSource?: NewsSource;
  /** First seen by the store at or after this ISO time. */
  since?: string;
  /** First seen by the store before this ISO time. */
  before?: string;
  /** Amount at least this (a decimal string). */
  amountMin?: string;
  /** Amount at most this (a decimal string). */
  amountMax?: string;
  /** @default 100 */
  limit?: number;
  /** @default 0 */
  offset?: number;
}

/** A resource as the operator's lists show it: with its handler's state. */
export interface ResourceListing extends ResourceRecord {
  handler: HandlerState;
}

/**
 * One entry of a timeline kept for the operator (news of a resource, a handler attempt, a reconcile
 * pass, a console action, an alert): what the console shows; nothing decides from it.
 */
export interface Activity {
  /** Whose timeline: `payment:<id>`, `invoice:<id>`, or a subject of the toolkit (`reconcile`, `console`, `alerts`, `receiver`). */
  subject: string;
  /** What the entry is, e.g. `news`, `handler`, `reconcile`, `action`, `alert`. */
  kind: string;
  /** When it happened, on the caller's clock. */
  at: string;
  /** JSON-serialisable details. */
  data: Record<string, unknown>;
}

/** What `appendActivity` takes: the time is the caller's `now`. */
export type NewActivity = Omit<Activity, 'at'>;

/** Whose timeline `listActivity` reads, and which page of it. */
export interface ActivityFilter {
  subject: string;
  /** @default 100 */
  limit?: number;
  /** Skip this many entries first (paging). @default 0 */
  offset?: number;
}

/** The counts of the operator's overview, as of the caller's `now`. */
export interface StoreSummary {
  /** Events received in the last hour and the last 24 hours, by type (types without one in 24 hours are absent). */
  eventsByType: Array<{ type: string; lastHour: number; lastDay: number }>;
  /** Event dispatch runs: the backlog (pending, running), those failed for good, and since when the oldest of the backlog was due (never later than `now`). */
  dispatch: { pending: number; running: number; failed: number; oldestQueuedAt: string | undefined };
  /** Fulfillment handler runs still to do or failed for good (done ones are not counted). */
  fulfillment: { pending: number; running: number; failed: number };
  /** Resources still awaiting an outcome (or late money). */
  open: Record<ResourceKind, number>;
  /** Resources whose current outcome was first learned by reconcile: news the webhooks did not bring. */
  learnedByReconcile: Record<ResourceKind, number>;
  deadLetters: number;
}

/** Who claims a run and for how long. */
export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  /** @default new Date() */
  now?: Date;
}

/** Why a run failed and when to try again. */
export interface FailOptions {
  error: string;
  /** @default new Date() */
  now?: Date;
  /** Retry at this time; omit to mark the run `failed` (given up, retryable by command). */
  retryAt?: string | undefined;
  /** The attempt failed only because the service could not be asked (an outage): counted in `outageAttempts` too. @default false */
  outage?: boolean | undefined;
}

/** What `prune` forgets: payloads, then whole events, older than given times. */
export interface PruneOptions {
  /** When the prune is made. @default new Date() */
  now?: Date;
  /** Drop payloads of events received before this time (ids stay for dedupe). */
  payloadsBefore?: string;
  /** Forget events (ids included) received before this time. Keep ≥ 7 days. */
  eventsBefore?: string;
}

/** The event log: each verified delivery once, with its dispatch run; letters that could not be parsed. */
export interface EventLog {
  /** Store an event once: `inserted` only for the first delivery of an id, whose dispatch run `event:<id>` is queued in the same transaction. */
  insertEvent(event: NewEvent, now?: Date): Promise<{ inserted: boolean }>;
  /** An event by id. */
  getEvent(id: string): Promise<StoredEvent | undefined>;
  /** Newest first. */
  listEvents(filter?: EventFilter): Promise<Array<StoredEvent & { run: Run | undefined }>>;
  /** Keep a delivery that verified but could not be parsed (or a diagnosed rejection). */
  insertDeadLetter(letter: Omit<DeadLetter, 'id'>, now?: Date): Promise<DeadLetter>;
  /** Newest first; `offset` skips that many first (paging). */
  listDeadLetters(limit?: number, offset?: number): Promise<DeadLetter[]>;
  /** Drop old payloads and forget old events; says how many. */
  prune(options: PruneOptions): Promise<{ payloadsPruned: number; eventsForgotten: number }>;
}

/**
 * The run queue, shaped like graphile-worker's: a run is claimed with a lease, renewed, and
 * completed or failed only by the lease holder, each in one guarded write.
 */
export interface RunQueue {
  /**
   * Insert a run if its key is new; returns the existing run otherwise. An event's dispatch run
   * (kind `event`, key `event:<id>`) is made only by `insertEvent`: asked for again, the stored one
   * is returned; any other run of kind `event` or keyed `event:` is refused with a `StoreError`.
   */
  enqueueRun(run: NewRun, now?: Date): Promise<{ inserted: boolean; run: Run }>;
  /** A run by key. */
  getRun(key: string): Promise<Run | undefined>;
  /** Lease a run that is `pending` and due, or `running` with an expired lease: the run (attempts incremented), or undefined. */
  claimRun(key: string, options: ClaimOptions): Promise<Run | undefined>;
  /** Extend a lease `owner` still holds to `now + leaseMs` (a long handler's heartbeat); false when it was lost. */
  renewLease(key: string, owner: string, leaseMs: number, now?: Date): Promise<boolean>;
  /** Mark done; only the lease owner may. Returns false when the lease was lost. */
  completeRun(key: string, owner: string, now?: Date): Promise<boolean>;
  /** Release with an error: back to pending at `retryAt`, or `failed`. Only the lease owner may. */
  failRun(key: string, owner: string, options: FailOptions): Promise<boolean>;
  /** Put a `failed` run back to pending, due at `now` (the `retry` commands). */
  retryRun(key: string, now?: Date): Promise<boolean>;
  /** Runs matching the filter, in creation order unless `newestFirst`. */
  listRuns(filter?: RunFilter): Promise<Run[]>;
  /** How many runs match. */
  countRuns(filter?: RunCountFilter): Promise<number>;
}

/** What is known of each payment and invoice: its outcome only moves forward. */
export interface Resources {
  /** Apply an update that only moves the outcome forward. Returns the record and whether it advanced. */
  updateResource(update: ResourceUpdate, now?: Date, options?: ResourceUpdateOptions): Promise<{ record: ResourceRecord; advanced: boolean }>;
  /** What is known of one payment or invoice. */
  getResource(kind: ResourceKind, id: string): Promise<ResourceRecord | undefined>;
  /** Resources matching the filter. */
  listResources(filter?: ResourceFilter): Promise<ResourceRecord[]>;
}

/** The create-once record of each order's checkout. */
export interface CheckoutAttempts {
  /** Insert the attempt for an order if none exists; returns the stored one either way. */
  putCheckoutAttempt(attempt: NewCheckoutAttempt, now?: Date): Promise<{ inserted: boolean; attempt: CheckoutAttempt }>;
  /** Record the resource the order's create made. */
  completeCheckoutAttempt(orderId: string, result: { resourceId: string; checkoutUrl: string | undefined }, now?: Date): Promise<CheckoutAttempt>;
  /**
   * The service refused the create for good (a 4xx other than 409/429): mark the `sending` attempt of
   * that number `refused`, so the order's next `putCheckoutAttempt` starts `number + 1`; returns whether it did.
   */
  releaseCheckoutAttempt(orderId: string, number: number, now?: Date): Promise<boolean>;
  /** An order's current checkout attempt. */
  getCheckoutAttempt(orderId: string): Promise<CheckoutAttempt | undefined>;
}

/** The create-once record of each partner tenant's merchant. */
export interface TenantMerchants {
  /** Insert the tenant's try if none stands (none, or a refused one of `number - 1`); returns the stored one either way. */
  putTenantMerchant(tenant: NewTenantMerchant, now?: Date): Promise<{ inserted: boolean; tenant: TenantMerchant }>;
  /** The service created the merchant: record it (the `sending` try's, whatever its number). */
  completeTenantMerchant(tenantId: string, environment: Environment, merchant: Merchant, now?: Date): Promise<TenantMerchant>;
  /** The service refused the create for good: only a `sending` try of that number is released; returns whether it was. */
  releaseTenantMerchant(tenantId: string, environment: Environment, number: number, now?: Date): Promise<boolean>;
  /** A tenant's merchant in one environment. */
  getTenantMerchant(tenantId: string, environment: Environment): Promise<TenantMerchant | undefined>;
  /** The tenant a service merchant was created for. */
  findTenantByMerchantId(merchantId: string): Promise<TenantMerchant | undefined>;
  /** Oldest first. */
  listTenantMerchants(filter?: { environment?: Environment | undefined; limit?: number | undefined; offset?: number | undefined }): Promise<TenantMerchant[]>;
}

/** Tenants' own credentials, sealed (see `SealedTenantCredentials`). */
export interface TenantCredentialsStore {
  /** Store a tenant's first sealed credentials; false when it has some already (replace those with `resealTenantCredentials`). */
  putTenantCredentials(credentials: Omit<SealedTenantCredentials, 'updatedAt'>, now?: Date): Promise<boolean>;
  /** Re-seal credentials by another key, only if they are still `from` (a rotation never overwrites newer ones); returns whether it did. */
  resealTenantCredentials(tenantId: string, environment: Environment, from: string, to: { sealed: string; keyId: string }, now?: Date): Promise<boolean>;
  /** Forget a tenant's credentials (it goes back to the partner's keys); returns whether there were any. */
  deleteTenantCredentials(tenantId: string, environment: Environment): Promise<boolean>;
  /** A tenant's sealed credentials in one environment, if the platform stores them. */
  getTenantCredentials(tenantId: string, environment: Environment): Promise<SealedTenantCredentials | undefined>;
  /** Oldest first. */
  listTenantCredentials(filter?: { limit?: number | undefined; offset?: number | undefined }): Promise<SealedTenantCredentials[]>;
}

/** Named leases, e.g. one reconcile pass at a time. */
export interface Locks {
  /** True when acquired: free, expired, or already `owner`'s (a renewal). */
  acquireLock(name: string, owner: string, ttlMs: number, now?: Date): Promise<boolean>;
  /** Give a lock back (only its owner's release counts). */
  releaseLock(name: string, owner: string, now?: Date): Promise<void>;
}

/** What the operator reads: timelines and the overview's counts. */
export interface OperatorViews {
  /** Add an entry to a subject's timeline; `prune` forgets those older than its `eventsBefore`. */
  appendActivity(entry: NewActivity, now?: Date): Promise<void>;
  /** Payments and invoices found by the operator's search and filters, newest first, from indexes. */
  searchResources(search: ResourceSearch): Promise<ResourceListing[]>;
  /** A subject's timeline, newest first (entries of one instant in the order they were added, reversed). */
  listActivity(filter: ActivityFilter): Promise<Activity[]>;
  /** The counts of the console's overview and the metrics, as of `now`, from indexes (never a read of every event). */
  summarize(options?: { now?: Date }): Promise<StoreSummary>;
}

/**
 * The storage seam. `SqlStore` implements it once for SQLite (embedded, memory) and PostgreSQL,
 * checked by one contract test suite. Every method that resolves has made its change durable
 * (committed; on SQLite, the write-ahead log synced).
 *
 * Time: every method that stamps or compares a time takes the caller's `now` (its last argument,
 * or `now` in its options), so that the engine, the receiver, reconcile and the checkout helper
 * all run on one injected clock. Omitted, it is the wall clock. A store never reads a clock of its
 * own for a value that a caller's clock is compared with.
 */
export interface Store extends EventLog, RunQueue, Resources, CheckoutAttempts, TenantMerchants, TenantCredentialsStore, Locks, OperatorViews {
  /** Human description for logs and `doctor` (never contains credentials). */
  readonly description: string;
  /** Connect and apply migrations; call once before use. */
  open(): Promise<void>;
  /** Wait for pending writes, then release connections and files. */
  close(): Promise<void>;
}
