import { StoreError } from '../../errors/index.js';
import type { Environment, Merchant } from '../../schemas/index.js';
import { DECIMAL } from '../../schemas/decimal-pattern.js';
import { enqueuedWithEvent } from './event-run-guard.js';
import { EVENT_RUN_PREFIX, fulfillmentKeySql, RESOURCE_KINDS, RUN_STATUSES } from '../../domain/index.js';
import {
  OUTCOME_RANK,
  type Activity,
  type ActivityFilter,
  type CheckoutAttempt,
  type ClaimOptions,
  type DeadLetter,
  type EventFilter,
  type FailOptions,
  type NewActivity,
  type NewCheckoutAttempt,
  type NewTenantMerchant,
  type SealedTenantCredentials,
  type NewEvent,
  type NewRun,
  type PruneOptions,
  type ResourceFilter,
  type ResourceKind,
  type ResourceListing,
  type ResourceRecord,
  type ResourceSearch,
  type ResourceUpdate,
  type ResourceUpdateOptions,
  type Run,
  type RunCountFilter,
  type RunFilter,
  type Store,
  type StoredEvent,
  type StoreSummary,
  type TenantMerchant,
} from '../types.js';
import type { Database, Queryable } from './database.js';
import type { Dialect } from './dialect.js';
import { GroupCommit } from './group-commit.js';
import { storableDatabase, storableJson, storableText } from './storable-text.js';
import { appliedMigrations, refuseNewerSchema, runMigrations, versionOf } from './migrate.js';
import { LATEST_VERSION, type MigrationReport } from './migrations.js';
import {
  ACTIVITY,
  ATTEMPT,
  DEAD_LETTER,
  encodeBody,
  EVENT,
  iso,
  RESOURCE,
  RUN,
  TENANT_CREDENTIALS,
  TENANT_MERCHANT,
  toPrefixedRun,
  type PrefixedRunRow,
  type RowOf,
  type RunRow,
} from './rows.js';
import { buildStatements, claimableAt, RUN_LIST, type Prepared, type Statements } from './statements.js';

export interface SqlStoreOptions {
  database: Database;
  dialect: Dialect;
  /** What migration reports call the store (the PostgreSQL schema, the SQLite file). */
  schema: string;
  /** For logs and `doctor`. @default the database's */
  description?: string | undefined;
  /** Apply pending migrations in `open()`; when false, `open()` refuses an outdated store. @default true */
  migrate?: boolean | undefined;
  /**
   * Concurrent `insertEvent` batches (see `GroupCommit`; PostgreSQL: half the pool). SQLite has one writer,
   * so 1: a batch of many rows costs a fraction of the CPU of as many one-row statements. @default 1
   */
  insertLanes?: number | undefined;
}

/** Most events written by one statement. */
const MAX_INSERT_BATCH = 200;

/**
 * What the operator's search finds a resource by, from its snapshot: the e-mail in lower case and
 * the amount where it is a decimal (as the schema's second migration reads stored snapshots).
 */
function searchableOf(snapshot: Record<string, unknown> | undefined): [email: string | null, amount: string | null] {
  const email = typeof snapshot?.email === 'string' ? snapshot.email.trim().toLowerCase() : '';
  const amount = typeof snapshot?.amount === 'string' && DECIMAL.test(snapshot.amount) ? snapshot.amount : null;
  return [email === '' ? null : email, amount];
}

/**
 * The store on SQL: one implementation of every rule for SQLite (the embedded default) and
 * PostgreSQL (several instances on one database). The database arbitrates: inserts are `ON
 * CONFLICT DO NOTHING`, a claim, renewal, completion or failure is one guarded `UPDATE`, an
 * outcome moves forward in one upsert. Every time is the caller's `now`, never the database's clock.
 */
export class SqlStore implements Store {
  readonly description: string;
  /** The database and its dialect, for what works on every table at once (`copyStore`). */
  readonly database: Database;
  readonly dialect: Dialect;
  private readonly sql: Statements;
  private readonly inserts: GroupCommit<{ event: NewEvent; at: number }, { inserted: boolean }>;

  constructor(private readonly options: SqlStoreOptions) {
    this.database = storableDatabase(options.database);
    this.dialect = options.dialect;
    this.sql = buildStatements(options.dialect);
    this.description = options.description ?? options.database.description;
    this.inserts = new GroupCommit((events) => this.insertEvents(events), options.insertLanes ?? 1, MAX_INSERT_BATCH);
  }

  /** Apply pending migrations (default), or check that the store is current (`migrate: false`). */
  async open(): Promise<void> {
    if (this.options.migrate ?? true) {
      await this.migrate();
      return;
    }
    const versions = await appliedMigrations(this.database, this.dialect);
    refuseNewerSchema(versions, this.options.schema);
    const current = versionOf(versions);
    if (current < LATEST_VERSION) {
      throw new StoreError(
        `${this.description} is at schema version ${current}, this checkout-kit needs ${LATEST_VERSION}: run \`checkout-kit migrate\` with CHECKOUT_STORE naming it.`,
      );
    }
  }

  async close(): Promise<void> {
    await this.database.close();
  }

  /** Bring the schema to the latest version; safe to run from several instances at once. */
  migrate(): Promise<MigrationReport> {
    return runMigrations(this.database, this.dialect, this.options.schema);
  }

  // Events

  insertEvent(event: NewEvent, now = new Date()): Promise<{ inserted: boolean }> {
    return this.inserts.push({ event, at: now.getTime() });
  }

  /**
   * Events and their dispatch runs, in one transaction: each event is inserted unless its id is
   * stored or came earlier in `items`, and only an inserted one has its run queued, due at its
   * caller's `now`.
   */
  private async insertEvents(items: Array<{ event: NewEvent; at: number }>): Promise<Array<{ inserted: boolean }>> {
    const events = items.map((item) => item.event);
    const values = events.flatMap((event) => {
      const body = event.body === undefined ? { text: null, escaped: false } : encodeBody(event.body);
      return [
        event.id,
        event.type,
        event.environment ?? null,
        event.createdAt,
        iso(event.receivedAt),
        event.resourceKind ?? null,
        event.resourceId ?? null,
        body.text,
        body.escaped,
      ];
    });
    return this.database.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string }>({ ...this.sql.insertEvents(events.length), values });
      const stored = new Set(rows.map((row) => row.id));
      // The first of several deliveries of one id in the batch is the one that inserted it.
      const results = events.map((event) => ({ inserted: stored.delete(storableText(event.id)) }));
      const queued = items.filter((_, i) => results[i]!.inserted);
      if (queued.length > 0) {
        await tx.query({
          ...this.sql.insertEventRuns(queued.length),
          values: queued.flatMap(({ event, at }) => [`${EVENT_RUN_PREFIX}${event.id}`, iso(at), storableJson({ eventId: event.id, type: event.type })]),
        });
      }
      return results;
    });
  }

  async getEvent(id: string): Promise<StoredEvent | undefined> {
    return this.first(this.sql.getEvent, [id], EVENT.read);
  }

  async listEvents(filter: EventFilter = {}): Promise<Array<StoredEvent & { run: Run | undefined }>> {
    const where = new Where();
    if (filter.type !== undefined) where.add('e.type = ?', filter.type);
    if (filter.since !== undefined) where.add('e.received_at >= ?', iso(filter.since));
    if (filter.resourceId !== undefined) where.add('e.resource_id = ?', filter.resourceId);
    if (filter.status !== undefined) where.add('r.status = ?', filter.status);
    // Newest first; ties in arrival order.
    const { rows } = await this.database.query<RowOf<typeof EVENT> & PrefixedRunRow>({
      text: `${this.sql.eventsWithRuns} ${where.sql} ORDER BY e.received_at DESC, e.seq ${where.page(filter.limit ?? 100, filter.offset)}`,
      values: where.values,
    });
    return rows.map((row) => ({ ...EVENT.read(row), run: toPrefixedRun(row) }));
  }

  // The letter carries its own receivedAt: nothing else here is stamped.
  async insertDeadLetter(letter: Omit<DeadLetter, 'id'>, _now?: Date): Promise<DeadLetter> {
    const body = encodeBody(letter.body);
    const { rows } = await this.database.query<RowOf<typeof DEAD_LETTER>>({
      ...this.sql.insertDeadLetter,
      values: [crypto.randomUUID(), iso(letter.receivedAt), letter.reason, body.text, body.escaped, storableJson(letter.headers)],
    });
    return DEAD_LETTER.read(one(rows));
  }

  async listDeadLetters(limit = 100, offset = 0): Promise<DeadLetter[]> {
    return this.all(this.sql.listDeadLetters, [limit, offset], DEAD_LETTER.read);
  }

  // Runs

  async enqueueRun(run: NewRun, now = new Date()): Promise<{ inserted: boolean; run: Run }> {
    // An event's dispatch run is queued with its event, or the event is unknown.
    const withEvent = await enqueuedWithEvent(run, (key) => this.getRun(key));
    if (withEvent) return withEvent;
    const inserted = await this.insertRun(this.database, run, now);
    if (inserted) return { inserted: true, run: RUN.read(inserted) };
    // Fulfillment runs are never deleted: a conflict means the row is there to read.
    return { inserted: false, run: (await this.getRun(run.key)) as Run };
  }

  /** Insert `run` unless its key is taken, due at `now` unless it says when; its row when inserted. */
  private async insertRun(db: Queryable, run: NewRun, now: Date): Promise<RunRow | undefined> {
    const at = iso(now);
    const { rows } = await db.query<RunRow>({
      ...this.sql.runs.enqueue,
      values: [run.key, run.kind, run.nextAttemptAt ? iso(run.nextAttemptAt) : at, storableJson(run.data), at],
    });
    return rows[0];
  }

  async getRun(key: string): Promise<Run | undefined> {
    return this.first(this.sql.runs.get, [key], RUN.read);
  }

  async claimRun(key: string, options: ClaimOptions): Promise<Run | undefined> {
    const at = (options.now ?? new Date()).getTime();
    return this.first(this.sql.runs.claim, [key, options.owner, iso(at), iso(at + options.leaseMs)], RUN.read);
  }

  async renewLease(key: string, owner: string, leaseMs: number, now = new Date()): Promise<boolean> {
    return this.changed(this.sql.runs.renew, [key, owner, iso(now), iso(now.getTime() + leaseMs)]);
  }

  async completeRun(key: string, owner: string, now = new Date()): Promise<boolean> {
    return this.changed(this.sql.runs.complete, [key, owner, iso(now)]);
  }

  async failRun(key: string, owner: string, options: FailOptions): Promise<boolean> {
    // An empty retryAt means "give up", like an absent one.
    const retryAt = options.retryAt ? iso(options.retryAt) : null;
    return this.changed(this.sql.runs.fail, [key, owner, iso(options.now ?? new Date()), retryAt, options.error, options.outage ? 1 : 0]);
  }

  async retryRun(key: string, now = new Date()): Promise<boolean> {
    return this.changed(this.sql.runs.retry, [key, iso(now)]);
  }

  async listRuns(filter: RunFilter = {}): Promise<Run[]> {
    const where = this.runsWhere(filter);
    const { rows } = await this.database.query<RunRow>({
      text: `SELECT ${RUN_LIST} FROM ${this.dialect.prefix}runs ${where.sql}
        ORDER BY seq${filter.newestFirst ? ' DESC' : ''} ${where.page(filter.limit ?? 100, filter.offset)}`,
      values: where.values,
    });
    return rows.map(RUN.read);
  }

  async countRuns(filter: RunCountFilter = {}): Promise<number> {
    const where = this.runsWhere(filter);
    const { rows } = await this.database.query<{ n: number | string }>({
      text: `SELECT count(*) AS n FROM ${this.dialect.prefix}runs ${where.sql}`,
      values: where.values,
    });
    return Number(rows[0]?.n ?? 0);
  }

  private runsWhere(filter: RunCountFilter): Where {
    const where = new Where();
    // Several kinds as `kind IN (…)`, not no condition: the active runs' index leads with the kind.
    if (typeof filter.kind === 'string') where.add('kind = ?', filter.kind);
    else if (filter.kind !== undefined) where.add(filter.kind.length === 0 ? '1 = 0' : `kind IN (${filter.kind.map((kind) => where.param(kind)).join(', ')})`);
    if (filter.status !== undefined) where.statuses(Array.isArray(filter.status) ? filter.status : [filter.status]);
    if (filter.dueBy !== undefined) where.add(claimableAt('?'), iso(filter.dueBy));
    return where;
  }

  // Resources

  async updateResource(update: ResourceUpdate, now = new Date(), options: ResourceUpdateOptions = {}): Promise<{ record: ResourceRecord; advanced: boolean }> {
    const { queue } = options;
    if (!queue) return this.upsertResource(this.database, update, now);
    return this.database.transaction(async (tx) => {
      const result = await this.upsertResource(tx, update, now);
      const run = queue(result.record);
      if (run) await this.insertRun(tx, run, now);
      return result;
    });
  }

  private async upsertResource(db: Queryable, update: ResourceUpdate, now: Date): Promise<{ record: ResourceRecord; advanced: boolean }> {
    const rank = update.outcome === undefined ? null : OUTCOME_RANK[update.outcome];
    // First sight of the resource: the record is the update applied to a pending one.
    const advancedFromNew = rank !== null && rank > OUTCOME_RANK.pending;
    // The global WebCrypto, not node:crypto: a command that only reads the store then starts without loading it.
    const token = crypto.randomUUID();
    const { rows } = await db.query<RowOf<typeof RESOURCE> & { advanced_by: string | null }>({
      ...this.sql.upsertResource,
      values: [
        update.kind,
        update.id,
        update.environment ?? null,
        // A payment made elsewhere than the checkout helper carries its order id as the service's referenceId.
        update.orderId ?? (typeof update.snapshot?.referenceId === 'string' && update.snapshot.referenceId !== '' ? update.snapshot.referenceId : null),
        advancedFromNew ? update.outcome : 'pending',
        advancedFromNew ? rank : OUTCOME_RANK.pending,
        advancedFromNew ? (update.source ?? null) : null,
        update.snapshot === undefined ? null : storableJson(update.snapshot),
        // An empty expiresAt is no news.
        update.expiresAt || null,
        iso(now),
        update.open ?? true,
        advancedFromNew && rank === OUTCOME_RANK.paid ? (update.late ?? false) : null,
        rank,
        token,
        advancedFromNew ? token : null,
        update.outcome ?? null,
        update.late ?? null,
        update.open ?? null,
        ...searchableOf(update.snapshot),
        update.orderId ?? null,
      ],
    });
    const row = one(rows);
    return { record: RESOURCE.read(row), advanced: row.advanced_by === token };
  }

  async getResource(kind: ResourceKind, id: string): Promise<ResourceRecord | undefined> {
    return this.first(this.sql.getResource, [kind, id], RESOURCE.read);
  }

  async listResources(filter: ResourceFilter = {}): Promise<ResourceRecord[]> {
    const where = new Where();
    if (filter.kind !== undefined) where.add('kind = ?', filter.kind);
    // As it stands in the partial index's definition, so SQLite uses that index.
    if (filter.open !== undefined) where.add(filter.open ? 'open' : 'NOT open');
    if (filter.lastNewsBefore !== undefined) where.add('last_news_at <= ?', iso(filter.lastNewsBefore));
    if (filter.outcomeSource !== undefined) where.add('outcome_source = ?', filter.outcomeSource);
    const { rows } = await this.database.query<RowOf<typeof RESOURCE>>({
      text: `SELECT ${RESOURCE.columns.join(', ')} FROM ${this.dialect.prefix}resources ${where.sql}
        ORDER BY seq${filter.newestFirst ? ' DESC' : ''} ${where.page(filter.limit ?? 1000, filter.offset)}`,
      values: where.values,
    });
    return rows.map(RESOURCE.read);
  }

  async searchResources(search: ResourceSearch): Promise<ResourceListing[]> {
    const where = new Where();
    const p = this.dialect.prefix;
    const handlerKey = (alias: string) => fulfillmentKeySql(`${alias}.kind`, `${alias}.id`, `${alias}.outcome`);
    // The few rows a search or a rare handler state names come first, each through its own index;
    // the rest of the filters then read only those.
    let from = `${p}resources res`;
    if (search.find !== undefined) {
      const trimmed = search.find.trim();
      const terms = [...new Set([search.find, trimmed])].map((term) => where.param(term));
      const find = terms.join(', ');
      // On a partner platform an order is kept as `<tenant>/<order>`: the tenant's own order id finds it
      // in every onboarded tenant, one order_id index lookup per tenant.
      const tenantOrders = terms.map((term) => `SELECT tenant_id || '/' || ${term} FROM ${p}tenant_merchants`).join(' UNION ');
      from = `(SELECT seq FROM ${p}resources WHERE kind IN (${RESOURCE_KINDS.map((kind) => `'${kind}'`).join(', ')}) AND id IN (${find})
        UNION SELECT seq FROM ${p}resources WHERE order_id IN (${find})
        UNION SELECT seq FROM ${p}resources WHERE order_id IN (${tenantOrders})
        UNION SELECT seq FROM ${p}resources WHERE email = ${where.param(trimmed.toLowerCase())}
        UNION SELECT r2.seq FROM ${p}events e JOIN ${p}resources r2 ON r2.kind = e.resource_kind AND r2.id = e.resource_id WHERE e.id IN (${find})) found
        JOIN ${p}resources res ON res.seq = found.seq`;
    } else if (search.handler === 'failed' || search.handler === 'running') {
      // From the runs' partial index to their resources, by the index on each resource's current run key
      // (a partial index's condition written as it stands in the index, so SQLite sees it applies).
      // `q.key || ''`: a value without SQLite's text affinity, which it can look up in an expression index.
      from = `(SELECT r2.seq FROM ${p}runs q JOIN ${p}resources r2 ON (${handlerKey('r2')}) = (q.key || '')
        WHERE q.kind = 'fulfillment' AND ${search.handler === 'failed' ? `q.status = 'failed'` : `q.status IN ('pending', 'running') AND q.status = 'running'`}) found
        JOIN ${p}resources res ON res.seq = found.seq`;
    }
    // Not through the (kind, id) index: nearly every row has one of two kinds, and newest first is the table's own order.
    if (search.kind !== undefined) where.add(`(res.kind || '') = ?`, search.kind);
    if (search.outcome !== undefined) where.add('res.outcome = ?', search.outcome);
    if (search.open !== undefined) where.add(search.open ? 'res.open' : 'NOT res.open');
    if (search.outcomeSource !== undefined) where.add('res.outcome_source = ?', search.outcomeSource);
    if (search.since !== undefined) where.add('res.created_at >= ?', iso(search.since));
    if (search.before !== undefined) where.add('res.created_at < ?', iso(search.before));
    const amount = this.dialect.jsonText('res.snapshot', 'amount');
    if (search.amountMin !== undefined) where.add(this.dialect.compareDecimal('res.amount_value', amount, '>=', '?'), search.amountMin);
    if (search.amountMax !== undefined) where.add(this.dialect.compareDecimal('res.amount_value', amount, '<=', '?'), search.amountMax);
    if (search.handler === 'none') where.add('r.key IS NULL');
    else if (search.handler !== undefined) where.add('r.status = ?', search.handler);
    const { rows } = await this.database.query<RowOf<typeof RESOURCE> & { handler_status: Run['status'] | null }>({
      text: `SELECT ${RESOURCE.columns.map((column) => `res.${column}`).join(', ')}, r.status AS handler_status
        FROM ${from} LEFT JOIN ${p}runs r ON r.key = ${handlerKey('res')}
        ${where.sql}
        ORDER BY res.seq DESC ${where.page(search.limit ?? 100, search.offset)}`,
      values: where.values,
    });
    return rows.map((row) => ({ ...RESOURCE.read(row), handler: row.handler_status ?? 'none' }));
  }

  // Checkout attempts

  async putCheckoutAttempt(attempt: NewCheckoutAttempt, now = new Date()): Promise<{ inserted: boolean; attempt: CheckoutAttempt }> {
    const values = [attempt.orderId, attempt.kind, attempt.idempotencyKey, attempt.requestHash, attempt.number ?? 1, iso(now)];
    const inserted = await this.first(this.sql.putCheckoutAttempt, values, ATTEMPT.read);
    if (inserted) return { inserted: true, attempt: inserted };
    // Attempts are never deleted: once the insert has met one, it is there to read.
    return { inserted: false, attempt: (await this.getCheckoutAttempt(attempt.orderId)) as CheckoutAttempt };
  }

  async completeCheckoutAttempt(orderId: string, result: { resourceId: string; checkoutUrl: string | undefined }, now = new Date()): Promise<CheckoutAttempt> {
    const completed = await this.first(this.sql.completeCheckoutAttempt, [orderId, result.resourceId, result.checkoutUrl ?? null, iso(now)], ATTEMPT.read);
    if (!completed) throw new Error(`No checkout attempt for order ${orderId}: call putCheckoutAttempt first.`);
    return completed;
  }

  async releaseCheckoutAttempt(orderId: string, number: number, now = new Date()): Promise<boolean> {
    return this.changed(this.sql.releaseCheckoutAttempt, [orderId, number, iso(now)]);
  }

  async getCheckoutAttempt(orderId: string): Promise<CheckoutAttempt | undefined> {
    return this.first(this.sql.getCheckoutAttempt, [orderId], ATTEMPT.read);
  }

  // Partner tenants' merchants

  async putTenantMerchant(tenant: NewTenantMerchant, now = new Date()): Promise<{ inserted: boolean; tenant: TenantMerchant }> {
    const values = [tenant.tenantId, tenant.environment, tenant.name, tenant.email, tenant.idempotencyKey, tenant.requestHash, tenant.number ?? 1, iso(now)];
    const inserted = await this.first(this.sql.putTenantMerchant, values, TENANT_MERCHANT.read);
    if (inserted) return { inserted: true, tenant: inserted };
    // Never deleted: once the insert has met one, it is there to read.
    return { inserted: false, tenant: (await this.getTenantMerchant(tenant.tenantId, tenant.environment)) as TenantMerchant };
  }

  async completeTenantMerchant(tenantId: string, environment: Environment, merchant: Merchant, now = new Date()): Promise<TenantMerchant> {
    const completed = await this.first(
      this.sql.completeTenantMerchant,
      [tenantId, environment, merchant.merchantId, storableJson(merchant), iso(now)],
      TENANT_MERCHANT.read,
    );
    if (completed) return completed;
    const stored = await this.getTenantMerchant(tenantId, environment);
    if (stored?.status === 'created') return stored;
    throw new Error(`No onboarding of tenant ${tenantId} (${environment}) is being sent: call putTenantMerchant first.`);
  }

  async releaseTenantMerchant(tenantId: string, environment: Environment, number: number, now = new Date()): Promise<boolean> {
    return this.changed(this.sql.releaseTenantMerchant, [tenantId, environment, number, iso(now)]);
  }

  async getTenantMerchant(tenantId: string, environment: Environment): Promise<TenantMerchant | undefined> {
    return this.first(this.sql.getTenantMerchant, [tenantId, environment], TENANT_MERCHANT.read);
  }

  async findTenantByMerchantId(merchantId: string): Promise<TenantMerchant | undefined> {
    return this.first(this.sql.findTenantByMerchantId, [merchantId], TENANT_MERCHANT.read);
  }

  async listTenantMerchants(
    filter: { environment?: Environment | undefined; limit?: number | undefined; offset?: number | undefined } = {},
  ): Promise<TenantMerchant[]> {
    return this.all(this.sql.listTenantMerchants, [filter.environment ?? null, filter.limit ?? 100, filter.offset ?? 0], TENANT_MERCHANT.read);
  }

  // Tenants' own credentials, sealed

  async putTenantCredentials(credentials: Omit<SealedTenantCredentials, 'updatedAt'>, now = new Date()): Promise<boolean> {
    const { tenantId, environment, sealed, keyId } = credentials;
    return this.changed(this.sql.putTenantCredentials, [tenantId, environment, sealed, keyId, iso(now)]);
  }

  async resealTenantCredentials(
    tenantId: string,
    environment: Environment,
    from: string,
    to: { sealed: string; keyId: string },
    now = new Date(),
  ): Promise<boolean> {
    return this.changed(this.sql.resealTenantCredentials, [tenantId, environment, from, to.sealed, to.keyId, iso(now)]);
  }

  async deleteTenantCredentials(tenantId: string, environment: Environment): Promise<boolean> {
    return this.changed(this.sql.deleteTenantCredentials, [tenantId, environment]);
  }

  async getTenantCredentials(tenantId: string, environment: Environment): Promise<SealedTenantCredentials | undefined> {
    return this.first(this.sql.getTenantCredentials, [tenantId, environment], TENANT_CREDENTIALS.read);
  }

  async listTenantCredentials(filter: { limit?: number | undefined; offset?: number | undefined } = {}): Promise<SealedTenantCredentials[]> {
    return this.all(this.sql.listTenantCredentials, [filter.limit ?? 100, filter.offset ?? 0], TENANT_CREDENTIALS.read);
  }

  // Locks

  async acquireLock(name: string, owner: string, ttlMs: number, now = new Date()): Promise<boolean> {
    return this.changed(this.sql.acquireLock, [name, owner, iso(now), iso(now.getTime() + ttlMs)]);
  }

  async releaseLock(name: string, owner: string, _now?: Date): Promise<void> {
    await this.database.query({ ...this.sql.releaseLock, values: [name, owner] });
  }

  async prune(options: PruneOptions): Promise<{ payloadsPruned: number; eventsForgotten: number }> {
    // One transaction: forget first, then drop payloads of what is left.
    return this.database.transaction(async (tx) => {
      let eventsForgotten = 0;
      if (options.eventsBefore !== undefined) {
        const before = iso(options.eventsBefore);
        await tx.query({ ...this.sql.forgetActivity, values: [before] });
        await tx.query({ ...this.sql.forgetEventRuns, values: [before] });
        eventsForgotten = (await tx.query({ ...this.sql.forgetEvents, values: [before] })).rowCount;
      }
      const payloadsPruned =
        options.payloadsBefore === undefined ? 0 : (await tx.query({ ...this.sql.prunePayloads, values: [iso(options.payloadsBefore), false] })).rowCount;
      return { eventsForgotten, payloadsPruned };
    });
  }

  // The operator's timelines and overview

  async appendActivity(entry: NewActivity, now = new Date()): Promise<void> {
    await this.database.query({ ...this.sql.appendActivity, values: [entry.subject, entry.kind, iso(now), storableJson(entry.data)] });
  }

  async listActivity(filter: ActivityFilter): Promise<Activity[]> {
    return this.all(this.sql.listActivity, [filter.subject, filter.limit ?? 100, filter.offset ?? 0], ACTIVITY.read);
  }

  async summarize({ now = new Date() }: { now?: Date } = {}): Promise<StoreSummary> {
    const at = now.getTime();
    const events = await this.database.query<{ type: string; last_hour: number | string; last_day: number | string }>({
      ...this.sql.summarizeEvents,
      values: [iso(at - 3_600_000), iso(at - 86_400_000)],
    });
    const backlog = await this.database.query<{
      kind: Run['kind'];
      status: 'pending' | 'running' | 'failed';
      n: number | string;
      oldest: Date | string | null;
    }>(this.sql.summarizeBacklog);
    const resources = await this.database.query<{ what: 'open' | 'reconcile' | 'dead'; kind: string; n: number | string }>(this.sql.summarizeResources);
    const summary: StoreSummary = {
      // Sorted here, not by the database's collation, so every store lists types alike.
      eventsByType: events.rows
        .map((row) => ({ type: row.type, lastHour: Number(row.last_hour), lastDay: Number(row.last_day) }))
        .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)),
      dispatch: { pending: 0, running: 0, failed: 0, oldestQueuedAt: undefined },
      fulfillment: { pending: 0, running: 0, failed: 0 },
      open: { payment: 0, invoice: 0 },
      learnedByReconcile: { payment: 0, invoice: 0 },
      deadLetters: 0,
    };
    for (const row of backlog.rows) {
      const counts = row.kind === 'event' ? summary.dispatch : summary.fulfillment;
      counts[row.status] = Number(row.n);
      if (row.kind === 'event' && row.oldest !== null) {
        // Never later than `now`: a retry due later is not waiting yet.
        const oldest = iso(Math.min(new Date(row.oldest).getTime(), at));
        if (summary.dispatch.oldestQueuedAt === undefined || oldest < summary.dispatch.oldestQueuedAt) summary.dispatch.oldestQueuedAt = oldest;
      }
    }
    for (const row of resources.rows) {
      if (row.what === 'dead') summary.deadLetters = Number(row.n);
      else if (row.kind === 'payment' || row.kind === 'invoice') (row.what === 'open' ? summary.open : summary.learnedByReconcile)[row.kind] = Number(row.n);
    }
    return summary;
  }

  /** Run one of the fixed statements: its rows, each read into a record by `read`. */
  private async all<Row, T>(statement: Prepared, values: unknown[], read: (row: Row) => T): Promise<T[]> {
    const { rows } = await this.database.query<Row>({ ...statement, values });
    return rows.map((row) => read(row));
  }

  /** The record of a statement's first row, or undefined when it returned none. */
  private async first<Row, T>(statement: Prepared, values: unknown[], read: (row: Row) => T): Promise<T | undefined> {
    return (await this.all(statement, values, read))[0];
  }

  /** Run one of the fixed statements: whether it changed a row (a guarded write that matched). */
  private async changed(statement: Prepared, values: unknown[]): Promise<boolean> {
    return (await this.database.query({ ...statement, values })).rowCount > 0;
  }
}

/** A WHERE clause with `?` placeholders numbered as they are added. */
class Where {
  readonly values: unknown[] = [];
  private readonly conditions: string[] = [];

  /** Add a parameter; returns its placeholder. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** `LIMIT` and `OFFSET`, as parameters. */
  page(limit: number, offset = 0): string {
    return `LIMIT ${this.param(limit)} OFFSET ${this.param(offset)}`;
  }

  /** Add a condition; every `?` in it stands for `value`, when there is one. */
  add(condition: string, ...value: [unknown] | []): void {
    this.conditions.push(value.length === 0 ? condition : condition.replaceAll('?', this.param(value[0])));
  }

  /** Runs of these statuses, written as literals (checked against `RUN_STATUSES`): SQLite uses a partial index only for a condition it can read. */
  statuses(statuses: readonly string[]): void {
    const known = statuses.filter((status) => (RUN_STATUSES as readonly string[]).includes(status));
    if (known.length !== statuses.length) throw new StoreError(`Unknown run status in ${JSON.stringify(statuses)}: use ${RUN_STATUSES.join(', ')}.`);
    const literals = known.map((status) => `'${status}'`);
    this.conditions.push(literals.length === 0 ? '1 = 0' : literals.length === 1 ? `status = ${literals[0]}` : `status IN (${literals.join(', ')})`);
  }

  get sql(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }
}

function one<R>(rows: R[]): R {
  const row = rows[0];
  if (row === undefined) throw new StoreError('The database returned no row where one was expected: was the schema changed by hand?');
  return row;
}
