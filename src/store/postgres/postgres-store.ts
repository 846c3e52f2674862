import { createRequire } from 'node:module';
import type pg from 'pg';
import { ConfigError, NoStoreError, StoreError } from '../../errors/index.js';
import { silentLogger, type Logger } from '../../log/index.js';
import type { Database } from '../sql/database.js';
import { DEFAULT_POSTGRES_SCHEMA, postgresDialect } from '../sql/dialect.js';
import { appliedMigrations } from '../sql/migrate.js';
import { SqlStore, type SqlStoreOptions } from '../sql/sql-store.js';
import type { MigrationReport } from '../sql/migrations.js';
import { DatabaseFailure, poolDatabase } from './database.js';

/**
 * What the server (or pg) answers when the store URL itself is wrong: a URL that does not parse, no
 * such database or role, a wrong password, a reserved schema name (`pg_…`), no right to create the schema.
 */
const MISCONFIGURED = new Set(['ERR_INVALID_URL', '3D000', '28000', '28P01', '42939', '42501']);

/** pg's refusal to go on with SCRAM (PostgreSQL's default authentication) when the URL, PGPASSWORD and ~/.pgpass give no password. */
const NO_PASSWORD = /^SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a (non-empty )?string$/;

/** Where the PostgreSQL store connects, its schema, pool and migrations. */
export interface PostgresStoreOptions extends Pick<SqlStoreOptions, 'migrate'> {
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
   * Open all `poolMax` connections of the pool made from `connectionString` in `open()` and keep them while
   * idle (pg closes idle ones after 10 s), so a receiver's first deliveries after a quiet spell do not wait
   * for connections (`serve` sets it). @default false
   */
  warmPool?: boolean | undefined;
  /** Server-side limit on each statement of the pool made from `connectionString`. @default 10000 */
  statementTimeoutMs?: number | undefined;
  /** `open()` refuses, with a `ConfigError`, a schema checkout-kit never set up instead of creating it. @default false */
  mustExist?: boolean | undefined;
  /** What the store's URL was given as, named in messages that say what to check (e.g. `--to` for `store copy`'s target). @default 'CHECKOUT_STORE' */
  setting?: string | undefined;
  /** @default silentLogger */
  logger?: Logger | undefined;
}

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
  // pg is loaded here, when a store connects by URL: importing checkout-kit loads no driver.
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

/**
 * The store for merchants who run several instances: every process (receivers, reconcilers, the
 * CLI) shares one PostgreSQL database, with the same SQL as the embedded store (`SqlStore`).
 * Concurrent `insertEvent` calls share statements when the connections are busy (group commit).
 * Across hosts, leases assume clocks kept in sync (NTP), as any lease does.
 *
 * @example
 * const store = new PostgresStore({ connectionString: process.env.CHECKOUT_STORE });
 * await store.open(); // applies pending migrations
 */
export class PostgresStore extends SqlStore {
  /** The schema holding the tables. */
  readonly schema: string;
  /** Connections `open()` opens up front (`warmPool`, own pool only). */
  private readonly warmConnections: number;
  private readonly mustExist: boolean;
  private readonly setting: string;

  constructor(options: PostgresStoreOptions) {
    const { database, schemaFromUrl, connections } = connect(options, options.logger ?? silentLogger);
    const schema = options.schema ?? schemaFromUrl ?? DEFAULT_POSTGRES_SCHEMA;
    if (!SCHEMA_NAME.test(schema)) {
      throw new ConfigError(`PostgreSQL schema name "${schema}" is not allowed: use letters, digits and underscores (at most 63), not starting with a digit.`);
    }
    // Half the connections write events at most; the rest stay free for dispatch and reads.
    super({
      database,
      description: `${database.description}, schema ${schema}`,
      dialect: postgresDialect(schema),
      schema,
      migrate: options.migrate,
      insertLanes: Math.max(1, Math.ceil(connections / 2)),
    });
    this.schema = schema;
    this.mustExist = options.mustExist ?? false;
    this.setting = options.setting ?? 'CHECKOUT_STORE';
    this.warmConnections = options.warmPool && options.connectionString !== undefined ? connections : 0;
  }

  /** SqlStore's `open()`, after refusing a schema never set up (`mustExist`); then warms the pool. */
  override async open(): Promise<void> {
    try {
      if (this.mustExist && (await appliedMigrations(this.database, this.dialect)).length === 0) {
        throw new NoStoreError(
          `No checkout-kit store in ${this.description}: nothing was ever stored there. Check ${this.setting} (its schema), or run \`checkout-kit migrate\` first.`,
        );
      }
      await super.open();
      if (this.warmConnections > 0) await this.database.warm?.(this.warmConnections);
    } catch (error) {
      // The server's own failure at open (not a busy one): most often where it is, or whether it takes connections.
      const failed = error instanceof DatabaseFailure && error.reason !== 'busy';
      if (!failed && (error instanceof StoreError || error instanceof ConfigError)) throw error;
      const cause = failed ? error.cause : error;
      const wrongUrl = this.misconfigured(cause);
      if (wrongUrl) throw wrongUrl;
      throw new StoreError(
        `Could not open the store ${this.description}: ${(cause as Error).message}. Check ${this.setting} and that the server accepts connections.`,
        { cause, reason: failed ? error.reason : undefined },
      );
    }
  }

  /** SqlStore's `migrate()`; a store URL the server refuses is said as `open()` says it. */
  override async migrate(): Promise<MigrationReport> {
    try {
      return await super.migrate();
    } catch (error) {
      throw this.misconfigured(error instanceof DatabaseFailure ? error.cause : error) ?? error;
    }
  }

  /** A `ConfigError` naming the setting when `cause` (the server's or pg's own error) says the store URL itself is wrong. */
  private misconfigured(cause: unknown): ConfigError | undefined {
    if (cause instanceof Error && NO_PASSWORD.test(cause.message)) {
      return new ConfigError(
        `Could not open the store ${this.description}: the server asks for a password and none was given. Put it in ${this.setting} (postgres://user:password@host/database) or in PGPASSWORD.`,
        { cause },
      );
    }
    // pg reads the files the URL names (sslrootcert, sslcert, sslkey) before it connects.
    const { syscall, path } = (cause ?? {}) as { syscall?: unknown; path?: unknown };
    if (syscall === 'open' && typeof path === 'string') {
      return new ConfigError(
        `Could not open the store ${this.description}: the file ${path} that ${this.setting} names (sslrootcert, sslcert or sslkey) cannot be read (${(cause as Error).message}). Check the path and its permissions.`,
        { cause },
      );
    }
    if (!MISCONFIGURED.has(String((cause as { code?: unknown } | undefined)?.code))) return undefined;
    return new ConfigError(
      `Could not open the store ${this.description}: ${(cause as Error).message}. Check ${this.setting}: its user, password, host, port, database and schema.`,
      { cause },
    );
  }
}
