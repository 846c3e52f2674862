import type { Database } from './database.js';

/**
 * One step of the schema. Migrations are append-only: a released one is never edited, a change is
 * a new version. Statements take the quoted schema name (`"checkout_kit"`), so a store can live in
 * any schema and tests can use a throwaway one.
 */
export interface Migration {
  version: number;
  name: string;
  statements(schema: string): string[];
}

/**
 * A run's lease and retry state, the same in both tables of version 1: `events` (each event's
 * dispatch run) and `runs` (every other run). Part of a released migration, so never edited.
 */
const RUN_STATE_COLUMNS_V1 = `status text NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        owner text,
        lease_until timestamptz,
        next_attempt_at timestamptz NOT NULL,
        last_error text,`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'events, runs, resources, checkout attempts, dead letters, locks',
    statements: (s) => [
      // One sequence numbers events and runs alike: `seq` orders rows by arrival (the memory
      // store's insertion order), also across both tables when runs of every kind are listed.
      `CREATE SEQUENCE ${s}.arrival_seq`,
      // An event and its dispatch run (`event:<id>`) are one row: one insert per delivery, and
      // forgetting the event forgets its run. Times the store keeps or filters on are timestamptz;
      // times copied from the service (`created_at` of the envelope, `expires_at` of a resource)
      // are text, returned exactly as they came.
      `CREATE TABLE ${s}.events (
        id text PRIMARY KEY,
        seq bigint NOT NULL DEFAULT nextval('${s}.arrival_seq'),
        type text NOT NULL,
        environment text,
        created_at text NOT NULL,
        received_at timestamptz NOT NULL,
        resource_kind text,
        resource_id text,
        body text,
        body_escaped boolean NOT NULL DEFAULT false,
        ${RUN_STATE_COLUMNS_V1}
        queued_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        completed_at timestamptz
      )`,
      `COMMENT ON COLUMN ${s}.events.body IS 'Raw request body; NULL once pruned. When body_escaped, it holds JSON.stringify(body): the raw text had a NUL or a lone surrogate, which text cannot hold.'`,
      `COMMENT ON COLUMN ${s}.events.status IS 'Status of the dispatch run event:<id>; queued_at is that run''s createdAt.'`,
      `CREATE INDEX events_received_at_idx ON ${s}.events (received_at DESC, seq)`,
      `CREATE INDEX events_resource_id_idx ON ${s}.events (resource_id)`,
      // Dispatchers poll what is still to do; finished runs (nearly all of them) stay out of it.
      `CREATE INDEX events_active_idx ON ${s}.events (next_attempt_at) WHERE status IN ('pending', 'running')`,
      `CREATE INDEX events_failed_idx ON ${s}.events (seq) WHERE status = 'failed'`,
      // Every other run: the fulfillment engine's, one per resource and outcome.
      `CREATE TABLE ${s}.runs (
        key text PRIMARY KEY,
        seq bigint NOT NULL DEFAULT nextval('${s}.arrival_seq'),
        kind text NOT NULL CHECK (kind = 'fulfillment'),
        ${RUN_STATE_COLUMNS_V1}
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        completed_at timestamptz
      )`,
      `CREATE INDEX runs_active_idx ON ${s}.runs (next_attempt_at) WHERE status IN ('pending', 'running')`,
      `CREATE INDEX runs_failed_idx ON ${s}.runs (seq) WHERE status = 'failed'`,
      `CREATE TABLE ${s}.resources (
        kind text NOT NULL CHECK (kind IN ('payment', 'invoice')),
        id text NOT NULL,
        seq bigint NOT NULL DEFAULT nextval('${s}.arrival_seq'),
        environment text,
        order_id text,
        outcome text NOT NULL,
        outcome_rank smallint NOT NULL,
        outcome_source text,
        snapshot jsonb,
        expires_at text,
        last_news_at timestamptz NOT NULL,
        open boolean NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (kind, id)
      )`,
      `CREATE INDEX resources_open_idx ON ${s}.resources (last_news_at) WHERE open`,
      `CREATE TABLE ${s}.checkout_attempts (
        order_id text PRIMARY KEY,
        kind text NOT NULL,
        idempotency_key text NOT NULL,
        request_hash text NOT NULL,
        status text NOT NULL CHECK (status IN ('sending', 'created')),
        resource_id text,
        checkout_url text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`,
      `CREATE TABLE ${s}.dead_letters (
        id text PRIMARY KEY,
        seq bigint NOT NULL DEFAULT nextval('${s}.arrival_seq'),
        received_at timestamptz NOT NULL,
        reason text NOT NULL,
        body text NOT NULL,
        body_escaped boolean NOT NULL DEFAULT false,
        headers jsonb NOT NULL
      )`,
      `CREATE INDEX dead_letters_seq_idx ON ${s}.dead_letters (seq DESC)`,
      `CREATE TABLE ${s}.locks (
        name text PRIMARY KEY,
        owner text NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
    ],
  },
  {
    version: 2,
    name: 'resources.late fixed when first paid; numbered checkout attempts that a refusal releases; active runs indexed in arrival order',
    statements: (s) => [
      `ALTER TABLE ${s}.resources ADD COLUMN late boolean`,
      `COMMENT ON COLUMN ${s}.resources.late IS 'Set when the outcome first reaches paid or overpaid (the amount was first reached after expires_at); never changed after. NULL while unpaid, and for resources paid before version 2.'`,
      `ALTER TABLE ${s}.checkout_attempts ADD COLUMN number integer NOT NULL DEFAULT 1`,
      `ALTER TABLE ${s}.checkout_attempts DROP CONSTRAINT checkout_attempts_status_check`,
      `ALTER TABLE ${s}.checkout_attempts ADD CONSTRAINT checkout_attempts_status_check CHECK (status IN ('sending', 'created', 'refused'))`,
      // The dispatch queue is read oldest first in pages: an index in that order over the active rows
      // only, so a read costs the page, not a sort of the whole backlog.
      `CREATE INDEX events_active_seq_idx ON ${s}.events (seq) WHERE status IN ('pending', 'running')`,
      `CREATE INDEX runs_active_seq_idx ON ${s}.runs (seq) WHERE status IN ('pending', 'running')`,
    ],
  },
  {
    version: 3,
    name: 'activity timelines for the operator console; resources learned by reconcile indexed',
    statements: (s) => [
      // What the console shows of a resource or of the toolkit (issue 15): appended, read newest
      // first per subject, forgotten by prune with the events.
      `CREATE TABLE ${s}.activity (
        seq bigint PRIMARY KEY DEFAULT nextval('${s}.arrival_seq'),
        subject text NOT NULL,
        kind text NOT NULL,
        at timestamptz NOT NULL,
        data jsonb NOT NULL
      )`,
      `CREATE INDEX activity_subject_idx ON ${s}.activity (subject, seq DESC)`,
      `CREATE INDEX activity_at_idx ON ${s}.activity (at)`,
      // The overview counts payments the webhooks missed without reading every resource.
      `CREATE INDEX resources_reconcile_idx ON ${s}.resources (kind) WHERE outcome_source = 'reconcile'`,
    ],
  },
];

/** The version this code needs. */
export const LATEST_VERSION = Math.max(...MIGRATIONS.map((migration) => migration.version));

export interface AppliedMigration {
  version: number;
  name: string;
  appliedAt: string;
}

export interface MigrationReport {
  schema: string;
  /** Versions this call applied (empty when the schema was up to date). */
  applied: Array<{ version: number; name: string }>;
  /** Every version recorded in the schema, oldest first. */
  versions: AppliedMigration[];
  /** Highest version recorded. */
  current: number;
}

/** Versions recorded in `schema_migrations`, or none when the schema or table does not exist yet. */
export async function appliedMigrations(db: Database, quoted: string): Promise<AppliedMigration[]> {
  const found = await db.query<{ present: boolean }>({
    text: 'SELECT to_regclass($1) IS NOT NULL AS present',
    values: [`${quoted}.schema_migrations`],
  });
  if (!found.rows[0]?.present) return [];
  const rows = await db.query<{ version: number; name: string; applied_at: Date }>({
    text: `SELECT version, name, applied_at FROM ${quoted}.schema_migrations ORDER BY version`,
  });
  return rows.rows.map((row) => ({ version: row.version, name: row.name, appliedAt: new Date(row.applied_at).toISOString() }));
}

/**
 * Bring `schema` up to `LATEST_VERSION`. Each migration runs in its own transaction that first
 * takes a transaction-scoped advisory lock on the schema's name: instances starting together
 * queue there, and each re-checks `schema_migrations` once it holds the lock, so every version is
 * applied exactly once. Safe to call on every start: an up-to-date schema costs two reads.
 */
export async function runMigrations(db: Database, schema: string, quoted: string): Promise<MigrationReport> {
  const known = new Set((await appliedMigrations(db, quoted)).map((row) => row.version));
  const applied: MigrationReport['applied'] = [];
  for (const migration of MIGRATIONS) {
    if (known.has(migration.version)) continue;
    const ran = await db.transaction(async (tx) => {
      // Migrations may rewrite big tables: the store's statement timeout is for its queries.
      await tx.query({ text: 'SET LOCAL statement_timeout = 0' });
      await tx.query({ text: 'SELECT pg_advisory_xact_lock(hashtext($1))', values: [`checkout-kit migrations ${schema}`] });
      await tx.query({ text: `CREATE SCHEMA IF NOT EXISTS ${quoted}` });
      await tx.query({
        text: `CREATE TABLE IF NOT EXISTS ${quoted}.schema_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`,
      });
      const done = await tx.query({ text: `SELECT 1 FROM ${quoted}.schema_migrations WHERE version = $1`, values: [migration.version] });
      if (done.rowCount > 0) return false;
      for (const text of migration.statements(quoted)) await tx.query({ text });
      await tx.query({ text: `INSERT INTO ${quoted}.schema_migrations (version, name) VALUES ($1, $2)`, values: [migration.version, migration.name] });
      return true;
    });
    if (ran) applied.push({ version: migration.version, name: migration.name });
  }
  const versions = await appliedMigrations(db, quoted);
  return { schema, applied, versions, current: Math.max(0, ...versions.map((row) => row.version)) };
}
