import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type pg from 'pg';
import { ConfigError, StoreError } from '../../errors/index.js';
import { silentLogger, type Logger } from '../../log/index.js';
import { enqueuedWithEvent } from '../../runs/event-run-guard.js';
import { eventIdOf } from '../../runs/keys.js';
import {
  OUTCOME_RANK,
  type Activity,
  type ActivityFilter,
  type NewActivity,
  type NewCheckoutAttempt,
  type CheckoutAttempt,
  type ClaimOptions,
  type DeadLetter,
  type EventFilter,
  type FailOptions,
  type NewEvent,
  type NewRun,
  type PruneOptions,
  type ResourceFilter,
  type ResourceKind,
  type ResourceRecord,
  type ResourceUpdate,
  type Run,
  type RunCountFilter,
  type RunFilter,
  type Store,
  type StoredEvent,
  type StoreSummary,
} from '../types.js';
import { poolDatabase, type Database } from './database.js';
import { GroupCommit } from './group-commit.js';
import { appliedMigrations, LATEST_VERSION, runMigrations, type MigrationReport } from './migrations.js';
import {
  encodeBody,
  EVENT_COLUMNS,
  RESOURCE_COLUMNS,
  toAttempt,
  toDeadLetter,
  toEvent,
  toPrefixedRun,
  toResource,
  toRun,
  type AttemptRow,
  type DeadLetterRow,
  type EventRow,
  type PrefixedRunRow,
  type ResourceRow,
  type RunRow,
} from './rows.js';
import { buildStatements, claimableAt, runSelect, type LeaseStatements, type RunTable, type Statements } from './statements.js';

export interface PostgresStoreOptions {
  /**
   * `postgres://user:password@host:5432/database`. A `schema` query parameter picks the schema
   * (`…/shop?schema=checkout`) when the `schema` option is not given. One of `connectionString`,
   * `pool` or `database` is required.
   * @example 'postgres://checkout@db.internal:5432/shop'
   */
  connectionString?: string | undefined;
  /** A `pg.Pool` the application already has; it is not ended by `close()`. */
  pool?: pg.Pool | undefined;
  /** Any `Database` (the tests pass PGlite); it is closed by `close()`. */
  database?: Database | undefined;
  /** Schema holding the tables, created by the first migration. @default 'checkout_kit' */
  schema?: string | undefined;
  /** Connections of the pool made from `connectionString`. @default 10 */
  poolMax?: number | undefined;
  /**
   * Open all `poolMax` connections of the pool made from `connectionString` in `open()` and keep
   * them while idle (pg closes an idle connection after 10 s). For a long-running receiver: the
   * first deliveries after a start or a quiet spell do not wait for connections to be set up
   * (`serve` sets it). @default false
   */
  warmPool?: boolean | undefined;
  /** Server-side limit on each statement of the pool made from `connectionString`. @default 10000 */
  statementTimeoutMs?: number | undefined;
  /** Apply pending schema migrations in `open()`; when false, `open()` refuses an outdated schema. @default true */
  migrate?: boolean | undefined;
  /**
   * `open()` refuses, with a `ConfigError`, a schema checkout-kit never set up (no migration
   * recorded) instead of creating it: for work that only reads what is stored. @default false
   */
  mustExist?: boolean | undefined;
  /** @default silentLogger */
  logger?: Logger | undefined;
}

const DEFAULT_SCHEMA = 'checkout_kit';
const DEFAULT_POOL_MAX = 10;
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Where to connect and what to call it, from the options (credentials never in the description). */
function connect(options: PostgresStoreOptions, logger: Logger): { database: Database; schemaFromUrl: string | undefined; connections: number } {
  const given = [options.connectionString, options.pool, options.database].filter((value) => value !== undefined).length;
  if (given !== 1) throw new ConfigError('PostgresStore needs exactly one of connectionString, pool or database.');
  if (options.database) return { database: options.database, schemaFromUrl: undefined, connections: 1 };
  if (options.pool) {
    const { host, port, database, max } = options.pool.options;
    return { database: poolDatabase(options.pool, describe(host, port, database), false), schemaFromUrl: undefined, connections: max ?? 10 };
  }
  let connectionString = options.connectionString as string;
  let schemaFromUrl: string | undefined;
  let description = 'PostgreSQL';
  try {
    const url = new URL(connectionString);
    schemaFromUrl = url.searchParams.get('schema') ?? undefined;
    if (schemaFromUrl !== undefined) {
      url.searchParams.delete('schema');
      connectionString = url.toString();
    }
    description = describe(decodeURIComponent(url.hostname) || url.searchParams.get('host') || 'localhost', url.port, url.pathname.slice(1));
  } catch {
    // A libpq key=value string: pg parses it; only the description stays generic.
  }
  const connections = options.poolMax ?? DEFAULT_POOL_MAX;
  // pg is loaded here, when a store connects by URL: importing checkout-kit loads no driver (issue 14).
  const { Pool } = createRequire(import.meta.url)('pg') as typeof pg;
  const pool = new Pool({
    connectionString,
    max: connections,
    // A warm pool keeps its connections through quiet spells (pg-pool closes idle ones above min).
    min: options.warmPool ? connections : 0,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    application_name: 'checkout-kit',
  });
  // An idle connection dropped by the server (restart, failover) must not crash the process: the
  // pool replaces it, and the next query reports any lasting problem.
  pool.on('error', (error) => logger.warn({ err: error.message }, `PostgreSQL connection lost: ${error.message}`));
  return { database: poolDatabase(pool, description, true), schemaFromUrl, connections };
}

function describe(host: string | undefined, port: string | number | undefined, database: string | undefined): string {
  return `PostgreSQL ${host ?? 'localhost'}${port ? `:${port}` : ''}/${database ?? ''}`;
}

/** Most events written by one statement. */
const MAX_INSERT_BATCH = 200;
const rankOf = (outcome: ResourceUpdate['outcome']) => (outcome === undefined ? null : OUTCOME_RANK[outcome]);

/**
 * The store for merchants who run several instances: every process (receivers, reconcilers, the
 * CLI) shares one PostgreSQL database, and the database arbitrates: inserts are `ON CONFLICT DO
 * NOTHING`, claims are conditional `UPDATE`s, the forward-only rule runs on a locked row. Every
 * promise resolves once its statement (or transaction) has committed. Concurrent `insertEvent`
 * calls share statements when the connections are busy (group commit, see `GroupCommit`).
 *
 * Time: every stamp and comparison uses the caller's `now` (the wall clock when omitted), exactly
 * like the memory and embedded stores, never the database's `now()`. One clock per comparison: a
 * lease written from `options.now` is compared with `options.now` of the next claimer, not with
 * the server's clock. Across hosts that assumes clocks kept in sync (NTP), as any lease does.
 *
 * @example
 * const store = new PostgresStore({ connectionString: process.env.CHECKOUT_STORE });
 * await store.open(); // applies pending migrations
 */
export class PostgresStore implements Store {
  readonly description: string;
  /** The schema holding the tables. */
  readonly schema: string;
  private readonly database: Database;
  private readonly quoted: string;
  private readonly sql: Statements;
  private readonly options: PostgresStoreOptions;
  private readonly inserts: GroupCommit<{ event: NewEvent; at: number }, { inserted: boolean }>;
  /** Connections `open()` opens up front (`warmPool`, own pool only). */
  private readonly warmConnections: number;

  constructor(options: PostgresStoreOptions) {
    const { database, schemaFromUrl, connections } = connect(options, options.logger ?? silentLogger);
    const schema = options.schema ?? schemaFromUrl ?? DEFAULT_SCHEMA;
    if (!SCHEMA_NAME.test(schema)) {
      throw new ConfigError(`PostgreSQL schema name "${schema}" is not allowed: use letters, digits and underscores (at most 63), not starting with a digit.`);
    }
    this.options = options;
    this.database = database;
    this.warmConnections = options.warmPool && options.connectionString !== undefined ? connections : 0;
    this.schema = schema;
    this.quoted = `"${schema}"`;
    this.sql = buildStatements(this.quoted);
    this.description = `${database.description}, schema ${schema}`;
    // Half the connections write events at most; the rest stay free for dispatch and reads.
    this.inserts = new GroupCommit((events) => this.insertEvents(events), Math.max(1, Math.ceil(connections / 2)), MAX_INSERT_BATCH);
  }

  /** Apply pending migrations (default), or check that the schema is current (`migrate: false`). */
  async open(): Promise<void> {
    try {
      if (this.options.mustExist && (await appliedMigrations(this.database, this.quoted)).length === 0) {
        throw new ConfigError(`No checkout-kit store in ${this.description}: nothing was ever stored there. Check CHECKOUT_STORE (its schema), or run \`checkout-kit migrate\` first.`);
      }
      if (this.options.migrate ?? true) {
        await this.migrate();
      } else {
        const versions = await appliedMigrations(this.database, this.quoted);
        const current = Math.max(0, ...versions.map((row) => row.version));
        if (current < LATEST_VERSION) {
          throw new StoreError(
            `${this.description} is at schema version ${current}, this checkout-kit needs ${LATEST_VERSION}: run \`checkout-kit migrate\` (or open the store with migrate: true).`,
          );
        }
      }
      if (this.warmConnections > 0) await this.database.warm?.(this.warmConnections);
    } catch (error) {
      if (error instanceof StoreError || error instanceof ConfigError) throw error;
      throw new StoreError(`Could not open the store ${this.description}: ${(error as Error).message}. Check CHECKOUT_STORE and that the server accepts connections.`, {
        cause: error,
      });
    }
  }

  async close(): Promise<void> {
    await this.database.close();
  }

  /** Bring the schema to the latest version; safe to run from several instances at once. */
  migrate(): Promise<MigrationReport> {
    return runMigrations(this.database, this.schema, this.quoted);
  }

  // Events

  insertEvent(event: NewEvent, now = new Date()): Promise<{ inserted: boolean }> {
    return this.inserts.push({ event, at: now.getTime() });
  }

  /**
   * One statement for many events; each is inserted unless its id is stored or came earlier in
   * `events`. Their dispatch runs are queued at the batch's latest time (a batch spans milliseconds).
   */
  private async insertEvents(items: Array<{ event: NewEvent; at: number }>): Promise<Array<{ inserted: boolean }>> {
    const columns: unknown[][] = Array.from({ length: 9 }, () => []);
    const events = items.map((item) => item.event);
    const at = new Date(Math.max(...items.map((item) => item.at))).toISOString();
    for (const event of events) {
      const body = event.body === undefined ? { text: null, escaped: false } : encodeBody(event.body);
      const row = [event.id, event.type, event.environment ?? null, event.createdAt, event.receivedAt, event.resourceKind ?? null, event.resourceId ?? null, body.text, body.escaped];
      row.forEach((value, i) => columns[i]!.push(value));
    }
    const { rows } = await this.database.query<{ id: string }>({ ...this.sql.insertEvents, values: [...columns, at] });
    const inserted = new Set(rows.map((row) => row.id));
    // The first of several deliveries of one id in the batch is the one that inserted it.
    return events.map((event) => ({ inserted: inserted.delete(event.id) }));
  }

  async getEvent(id: string): Promise<StoredEvent | undefined> {
    const { rows } = await this.database.query<EventRow>({ ...this.sql.getEvent, values: [id] });
    return rows[0] && toEvent(rows[0]);
  }

  async listEvents(filter: EventFilter = {}): Promise<Array<StoredEvent & { run: Run | undefined }>> {
    const where = new Where();
    if (filter.type !== undefined) where.add('type = ?', filter.type);
    if (filter.since !== undefined) where.add('received_at >= ?::timestamptz', filter.since);
    if (filter.resourceId !== undefined) where.add('resource_id = ?', filter.resourceId);
    if (filter.status !== undefined) where.add('status = ?', filter.status);
    // Newest first; ties in arrival order, as the memory store lists them.
    const { rows } = await this.database.query<EventRow & PrefixedRunRow>({
      text: `SELECT ${EVENT_COLUMNS.join(', ')}, ${runSelect('events', 'run_')} FROM ${this.quoted}.events ${where.sql}
        ORDER BY received_at DESC, seq LIMIT ${where.param(filter.limit ?? 100)} OFFSET ${where.param(filter.offset ?? 0)}`,
      values: where.values,
    });
    return rows.map((row) => ({ ...toEvent(row), run: toPrefixedRun(row) }));
  }

  // The letter carries its own receivedAt: nothing else here is stamped.
  async insertDeadLetter(letter: Omit<DeadLetter, 'id'>, _now?: Date): Promise<DeadLetter> {
    const body = encodeBody(letter.body);
    const { rows } = await this.database.query<DeadLetterRow>({
      ...this.sql.insertDeadLetter,
      values: [randomUUID(), letter.receivedAt, letter.reason, body.text, body.escaped, JSON.stringify(letter.headers)],
    });
    return toDeadLetter(one(rows));
  }

  async listDeadLetters(limit = 100, offset = 0): Promise<DeadLetter[]> {
    const { rows } = await this.database.query<DeadLetterRow>({ ...this.sql.listDeadLetters, values: [limit, offset] });
    return rows.map(toDeadLetter);
  }

  // Runs

  async enqueueRun(run: NewRun, now = new Date()): Promise<{ inserted: boolean; run: Run }> {
    // An event's dispatch run is its own row's: insertEvent queued it, or the event is unknown.
    const withEvent = await enqueuedWithEvent(run, (key) => this.getRun(key));
    if (withEvent) return withEvent;
    const values = [run.key, run.kind, run.nextAttemptAt ?? null, now.toISOString(), JSON.stringify(run.data)];
    // Inserted, or already there. Runs in this table are never deleted, so a conflict means the
    // row is there to read.
    const inserted = await this.database.query<RunRow>({ ...this.sql.enqueueRun, values });
    if (inserted.rows[0]) return { inserted: true, run: toRun(inserted.rows[0]) };
    return { inserted: false, run: (await this.getRun(run.key)) as Run };
  }

  async getRun(key: string): Promise<Run | undefined> {
    const { sql, id } = this.leaseOf(key);
    const { rows } = await this.database.query<RunRow>({ ...sql.get, values: [id] });
    return rows[0] && toRun(rows[0]);
  }

  async claimRun(key: string, options: ClaimOptions): Promise<Run | undefined> {
    const { sql, id } = this.leaseOf(key);
    const at = (options.now ?? new Date()).getTime();
    const { rows } = await this.database.query<RunRow>({
      ...sql.claim,
      values: [id, options.owner, new Date(at).toISOString(), new Date(at + options.leaseMs).toISOString()],
    });
    return rows[0] && toRun(rows[0]);
  }

  async renewLease(key: string, owner: string, leaseMs: number, now = new Date()): Promise<boolean> {
    const { sql, id } = this.leaseOf(key);
    const { rowCount } = await this.database.query({ ...sql.renew, values: [id, owner, now.toISOString(), new Date(now.getTime() + leaseMs).toISOString()] });
    return rowCount > 0;
  }

  async completeRun(key: string, owner: string, now = new Date()): Promise<boolean> {
    const { sql, id } = this.leaseOf(key);
    const { rowCount } = await this.database.query({ ...sql.complete, values: [id, owner, now.toISOString()] });
    return rowCount > 0;
  }

  async failRun(key: string, owner: string, options: FailOptions): Promise<boolean> {
    const { sql, id } = this.leaseOf(key);
    const { rowCount } = await this.database.query({
      ...sql.fail,
      // As in the memory store, an empty retryAt means "give up", like an absent one.
      values: [id, owner, (options.now ?? new Date()).toISOString(), options.retryAt || null, options.error],
    });
    return rowCount > 0;
  }

  async retryRun(key: string, now = new Date()): Promise<boolean> {
    const { sql, id } = this.leaseOf(key);
    const { rowCount } = await this.database.query({ ...sql.retry, values: [id, now.toISOString()] });
    return rowCount > 0;
  }

  async listRuns(filter: RunFilter = {}): Promise<Run[]> {
    const { tables, where } = this.runsWhere(filter);
    // In creation order across both tables: `seq` comes from one sequence.
    const { rows } = await this.database.query<RunRow>({
      text: `SELECT * FROM (${tables.map((table) => `SELECT seq, ${runSelect(table)} FROM ${this.quoted}.${table} ${where.sql}`).join(' UNION ALL ')}) AS run
        ORDER BY seq${filter.newestFirst ? ' DESC' : ''} LIMIT ${where.param(filter.limit ?? 100)} OFFSET ${where.param(filter.offset ?? 0)}`,
      values: where.values,
    });
    return rows.map(toRun);
  }

  async countRuns(filter: RunCountFilter = {}): Promise<number> {
    const { tables, where } = this.runsWhere(filter);
    const { rows } = await this.database.query<{ n: number }>({
      text: tables.map((table) => `SELECT count(*)::int AS n FROM ${this.quoted}.${table} ${where.sql}`).join(' UNION ALL '),
      values: where.values,
    });
    return rows.reduce((sum, row) => sum + row.n, 0);
  }

  /** The tables holding runs of `filter.kind`, and the WHERE clause of the rest of the filter. */
  private runsWhere(filter: RunCountFilter): { tables: RunTable[]; where: Where } {
    const tables: RunTable[] = filter.kind === 'event' ? ['events'] : filter.kind === 'fulfillment' ? ['runs'] : ['events', 'runs'];
    const where = new Where();
    if (filter.status !== undefined) where.add('status = ANY(?::text[])', Array.isArray(filter.status) ? filter.status : [filter.status]);
    if (filter.dueBy !== undefined) where.add(claimableAt('?::timestamptz'), filter.dueBy);
    return { tables, where };
  }

  /** Where the run `key` lives, and its id there (`event:<id>` is the row of event `<id>`). */
  private leaseOf(key: string): { sql: LeaseStatements; id: string } {
    const eventId = eventIdOf(key);
    return eventId === undefined ? { sql: this.sql.runs, id: key } : { sql: this.sql.eventRuns, id: eventId };
  }

  // Resources

  async updateResource(update: ResourceUpdate, now = new Date()): Promise<{ record: ResourceRecord; advanced: boolean }> {
    const at = now.toISOString();
    const rank = rankOf(update.outcome);
    const snapshot = update.snapshot === undefined ? null : JSON.stringify(update.snapshot);
    // As in the memory store, an empty expiresAt is no news.
    const expiresAt = update.expiresAt || null;
    // First sight of the resource: the record is the update applied to a pending one, and nothing
    // can be behind. A concurrent first sight makes this insert a no-op and falls through.
    const advancedFromNew = rank !== null && rank > OUTCOME_RANK.pending;
    const inserted = await this.database.query<ResourceRow>({
      ...this.sql.insertResource,
      values: [
        update.kind,
        update.id,
        update.environment ?? null,
        update.orderId ?? null,
        advancedFromNew ? update.outcome : 'pending',
        advancedFromNew ? rank : OUTCOME_RANK.pending,
        advancedFromNew ? (update.source ?? null) : null,
        snapshot,
        expiresAt,
        at,
        update.open ?? true,
        advancedFromNew && rank === OUTCOME_RANK.paid ? (update.late ?? false) : null,
      ],
    });
    if (inserted.rows[0]) return { record: toResource(inserted.rows[0]), advanced: advancedFromNew };
    const { rows } = await this.database.query<ResourceRow & { before_rank: number }>({
      ...this.sql.updateResource,
      values: [update.kind, update.id, rank, update.outcome ?? null, update.source ?? null, snapshot, expiresAt, update.environment ?? null, update.orderId ?? null, update.open ?? null, at, update.late ?? null],
    });
    const row = one(rows);
    return { record: toResource(row), advanced: rank !== null && rank > row.before_rank };
  }

  async getResource(kind: ResourceKind, id: string): Promise<ResourceRecord | undefined> {
    const { rows } = await this.database.query<ResourceRow>({ ...this.sql.getResource, values: [kind, id] });
    return rows[0] && toResource(rows[0]);
  }

  async listResources(filter: ResourceFilter = {}): Promise<ResourceRecord[]> {
    const where = new Where();
    if (filter.kind !== undefined) where.add('kind = ?', filter.kind);
    if (filter.open !== undefined) where.add('open = ?', filter.open);
    if (filter.lastNewsBefore !== undefined) where.add('last_news_at <= ?::timestamptz', filter.lastNewsBefore);
    if (filter.outcomeSource !== undefined) where.add('outcome_source = ?', filter.outcomeSource);
    const { rows } = await this.database.query<ResourceRow>({
      text: `SELECT ${RESOURCE_COLUMNS.join(', ')} FROM ${this.quoted}.resources ${where.sql}
        ORDER BY seq${filter.newestFirst ? ' DESC' : ''} LIMIT ${where.param(filter.limit ?? 1000)} OFFSET ${where.param(filter.offset ?? 0)}`,
      values: where.values,
    });
    return rows.map(toResource);
  }

  // Checkout attempts

  async putCheckoutAttempt(attempt: NewCheckoutAttempt, now = new Date()): Promise<{ inserted: boolean; attempt: CheckoutAttempt }> {
    const values = [attempt.orderId, attempt.kind, attempt.idempotencyKey, attempt.requestHash, now.toISOString(), attempt.number ?? 1];
    const inserted = await this.database.query<AttemptRow>({ ...this.sql.putCheckoutAttempt, values });
    if (inserted.rows[0]) return { inserted: true, attempt: toAttempt(inserted.rows[0]) };
    // Attempts are never deleted: once the insert has met one, it is there to read.
    const existing = await this.getCheckoutAttempt(attempt.orderId);
    return { inserted: false, attempt: existing as CheckoutAttempt };
  }

  async completeCheckoutAttempt(orderId: string, result: { resourceId: string; checkoutUrl: string | undefined }, now = new Date()): Promise<CheckoutAttempt> {
    const { rows } = await this.database.query<AttemptRow>({
      ...this.sql.completeCheckoutAttempt,
      values: [orderId, result.resourceId, result.checkoutUrl ?? null, now.toISOString()],
    });
    if (!rows[0]) throw new Error(`No checkout attempt for order ${orderId}: call putCheckoutAttempt first.`);
    return toAttempt(rows[0]);
  }

  async releaseCheckoutAttempt(orderId: string, number: number, now = new Date()): Promise<boolean> {
    const { rowCount } = await this.database.query({ ...this.sql.releaseCheckoutAttempt, values: [orderId, number, now.toISOString()] });
    return rowCount > 0;
  }

  async getCheckoutAttempt(orderId: string): Promise<CheckoutAttempt | undefined> {
    const { rows } = await this.database.query<AttemptRow>({ ...this.sql.getCheckoutAttempt, values: [orderId] });
    return rows[0] && toAttempt(rows[0]);
  }

  // Locks

  async acquireLock(name: string, owner: string, ttlMs: number, now = new Date()): Promise<boolean> {
    const at = now.getTime();
    const { rowCount } = await this.database.query({
      ...this.sql.acquireLock,
      values: [name, owner, new Date(at).toISOString(), new Date(at + ttlMs).toISOString()],
    });
    return rowCount > 0;
  }

  async releaseLock(name: string, owner: string, _now?: Date): Promise<void> {
    await this.database.query({ ...this.sql.releaseLock, values: [name, owner] });
  }

  async prune(options: PruneOptions): Promise<{ payloadsPruned: number; eventsForgotten: number }> {
    // One transaction, like the memory store's single op: forget first, then drop payloads of what is left.
    return this.database.transaction(async (tx) => {
      if (options.eventsBefore !== undefined) await tx.query({ ...this.sql.forgetActivity, values: [options.eventsBefore] });
      return {
        eventsForgotten: options.eventsBefore === undefined ? 0 : (await tx.query({ ...this.sql.forgetEvents, values: [options.eventsBefore] })).rowCount,
        payloadsPruned: options.payloadsBefore === undefined ? 0 : (await tx.query({ ...this.sql.prunePayloads, values: [options.payloadsBefore] })).rowCount,
      };
    });
  }

  // The operator's timelines and overview (issue 15)

  async appendActivity(entry: NewActivity, now = new Date()): Promise<void> {
    await this.database.query({ ...this.sql.appendActivity, values: [entry.subject, entry.kind, now.toISOString(), JSON.stringify(entry.data)] });
  }

  async listActivity(filter: ActivityFilter): Promise<Activity[]> {
    const { rows } = await this.database.query<{ subject: string; kind: string; at: Date | string; data: Record<string, unknown> }>({
      ...this.sql.listActivity,
      values: [filter.subject, filter.limit ?? 100, filter.offset ?? 0],
    });
    return rows.map((row) => ({ subject: row.subject, kind: row.kind, at: new Date(row.at).toISOString(), data: row.data }));
  }

  async summarize({ now = new Date() }: { now?: Date } = {}): Promise<StoreSummary> {
    const at = now.getTime();
    const events = await this.database.query<{ type: string; last_hour: number; last_day: number }>({
      ...this.sql.summarizeEvents,
      values: [new Date(at - 3_600_000).toISOString(), new Date(at - 86_400_000).toISOString()],
    });
    const backlog = await this.database.query<{ kind: 'event' | 'fulfillment'; status: 'pending' | 'running' | 'failed'; n: number; oldest: Date | string | null }>(this.sql.summarizeBacklog);
    const resources = await this.database.query<{ what: 'open' | 'reconcile' | 'dead'; kind: string; n: number }>(this.sql.summarizeResources);
    const summary: StoreSummary = {
      // Sorted here, not by the server's collation, so every store lists types alike.
      eventsByType: events.rows
        .map((row) => ({ type: row.type, lastHour: row.last_hour, lastDay: row.last_day }))
        .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)),
      dispatch: { pending: 0, running: 0, failed: 0, oldestQueuedAt: undefined },
      fulfillment: { pending: 0, running: 0, failed: 0 },
      open: { payment: 0, invoice: 0 },
      learnedByReconcile: { payment: 0, invoice: 0 },
      deadLetters: 0,
    };
    for (const row of backlog.rows) {
      const counts = row.kind === 'event' ? summary.dispatch : summary.fulfillment;
      counts[row.status] = row.n;
      if (row.kind === 'event' && row.oldest !== null) {
        const oldest = dueBy(new Date(row.oldest).toISOString(), now);
        if (summary.dispatch.oldestQueuedAt === undefined || oldest < summary.dispatch.oldestQueuedAt) summary.dispatch.oldestQueuedAt = oldest;
      }
    }
    for (const row of resources.rows) {
      if (row.what === 'dead') summary.deadLetters = row.n;
      else if (row.kind === 'payment' || row.kind === 'invoice') (row.what === 'open' ? summary.open : summary.learnedByReconcile)[row.kind] = row.n;
    }
    return summary;
  }
}

/** A backlog's oldest due time, never later than `now` (a retry due later is not waiting yet). */
const dueBy = (at: string, now: Date): string => (Date.parse(at) > now.getTime() ? now.toISOString() : at);

/** A WHERE clause with `?` placeholders numbered as they are added. */
class Where {
  readonly values: unknown[] = [];
  private readonly conditions: string[] = [];

  /** Add a parameter; returns its placeholder. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  add(condition: string, value: unknown): void {
    const placeholder = this.param(value);
    this.conditions.push(condition.replaceAll('?', placeholder));
  }

  get sql(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }
}

function one<R>(rows: R[]): R {
  const row = rows[0];
  if (row === undefined) throw new StoreError('PostgreSQL returned no row where one was expected: was the schema changed by hand?');
  return row;
}
