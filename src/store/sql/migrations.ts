import { fulfillmentKeySql } from '../../domain/index.js';
import type { Dialect } from './dialect.js';

/**
 * One step of the schema, the same for SQLite and PostgreSQL. Migrations are append-only: a
 * released one is never edited, a change is a new version.
 */
export interface Migration {
  version: number;
  name: string;
  /** The step's SQL in the database's dialect. */
  statements(dialect: Dialect): string[];
}

const RUN_STATUSES = `'pending', 'running', 'done', 'failed'`;

/** Every schema step, oldest first: what `migrate` applies. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'events, runs, resources, checkout attempts, dead letters, locks, activity',
    statements: ({ prefix: p, types: t }) => [
      // Times the store keeps or compares are `time`; times copied from the service (an envelope's
      // `created_at`, a resource's `expires_at`) are text, given back exactly as they came.
      `CREATE TABLE ${p}events (
        seq ${t.serialKey},
        id text NOT NULL UNIQUE,
        type text NOT NULL,
        environment text,
        created_at text NOT NULL,
        received_at ${t.time} NOT NULL,
        resource_kind text,
        resource_id text,
        body text,
        body_escaped ${t.bool} NOT NULL
      )`,
      // Newest first for the lists, and `type` inside it, so the overview counts a day by type from the index alone.
      `CREATE INDEX events_received_at_idx ON ${p}events (received_at DESC, seq, type)`,
      `CREATE INDEX events_resource_id_idx ON ${p}events (resource_id)`,
      // The run queue: each event's dispatch (`event:<id>`, queued with the event) and each
      // fulfillment handler (`payment:<id>:paid`). `seq` is the order runs were queued in.
      `CREATE TABLE ${p}runs (
        seq ${t.serialKey},
        key text NOT NULL UNIQUE,
        kind text NOT NULL CHECK (kind IN ('event', 'fulfillment')),
        status text NOT NULL CHECK (status IN (${RUN_STATUSES})),
        attempts integer NOT NULL,
        owner text,
        lease_until ${t.time},
        next_attempt_at ${t.time} NOT NULL,
        last_error text,
        data ${t.json} NOT NULL,
        created_at ${t.time} NOT NULL,
        updated_at ${t.time} NOT NULL,
        completed_at ${t.time}
      )`,
      // Workers poll what is still to do, oldest first; finished runs (nearly all of them) stay out
      // of it. Queries name the statuses as literals: SQLite uses a partial index only then.
      `CREATE INDEX runs_active_idx ON ${p}runs (kind, seq) WHERE status IN ('pending', 'running')`,
      `CREATE INDEX runs_failed_idx ON ${p}runs (kind, seq) WHERE status = 'failed'`,
      // `advanced_by` names the update that last moved the outcome forward, so the one statement
      // that applies an update can also say whether it was that update.
      `CREATE TABLE ${p}resources (
        seq ${t.serialKey},
        kind text NOT NULL CHECK (kind IN ('payment', 'invoice')),
        id text NOT NULL,
        environment text,
        order_id text,
        outcome text NOT NULL,
        outcome_rank ${t.smallint} NOT NULL,
        outcome_source text,
        late ${t.bool},
        snapshot ${t.json},
        expires_at text,
        last_news_at ${t.time} NOT NULL,
        open ${t.bool} NOT NULL,
        advanced_by text,
        created_at ${t.time} NOT NULL,
        updated_at ${t.time} NOT NULL,
        UNIQUE (kind, id)
      )`,
      `CREATE INDEX resources_open_idx ON ${p}resources (kind, last_news_at) WHERE open`,
      `CREATE INDEX resources_reconcile_idx ON ${p}resources (kind) WHERE outcome_source = 'reconcile'`,
      `CREATE INDEX resources_order_id_idx ON ${p}resources (order_id)`,
      `CREATE TABLE ${p}checkout_attempts (
        order_id text PRIMARY KEY,
        kind text NOT NULL,
        number integer NOT NULL,
        idempotency_key text NOT NULL,
        request_hash text NOT NULL,
        status text NOT NULL CHECK (status IN ('sending', 'created', 'refused')),
        resource_id text,
        checkout_url text,
        created_at ${t.time} NOT NULL,
        updated_at ${t.time} NOT NULL
      )`,
      `CREATE TABLE ${p}dead_letters (
        seq ${t.serialKey},
        id text NOT NULL UNIQUE,
        received_at ${t.time} NOT NULL,
        reason text NOT NULL,
        body text NOT NULL,
        body_escaped ${t.bool} NOT NULL,
        headers ${t.json} NOT NULL
      )`,
      `CREATE TABLE ${p}locks (
        name text PRIMARY KEY,
        owner text NOT NULL,
        expires_at ${t.time} NOT NULL
      )`,
      // What the console shows of a resource or of the toolkit, newest first per subject.
      `CREATE TABLE ${p}activity (
        seq ${t.serialKey},
        subject text NOT NULL,
        kind text NOT NULL,
        at ${t.time} NOT NULL,
        data ${t.json} NOT NULL
      )`,
      `CREATE INDEX activity_subject_idx ON ${p}activity (subject, seq DESC)`,
      `CREATE INDEX activity_at_idx ON ${p}activity (at)`,
    ],
  },
  {
    version: 2,
    name: 'resources found by e-mail, amount and handler state',
    statements: ({ prefix: p, types: t, jsonText, decimalOf }) => [
      // From the latest snapshot, kept beside it by the same statement: the e-mail in lower case
      // (found whatever case is typed), the amount as a number (compared, never summed), and the
      // service's referenceId as the order id of a payment made without the checkout helper.
      `ALTER TABLE ${p}resources ADD COLUMN email text`,
      `ALTER TABLE ${p}resources ADD COLUMN amount_value ${t.decimal}`,
      `UPDATE ${p}resources SET email = NULLIF(lower(trim(${jsonText('snapshot', 'email')})), ''), order_id = COALESCE(order_id, NULLIF(${jsonText('snapshot', 'referenceId')}, '')), amount_value = ${decimalOf(jsonText('snapshot', 'amount'))} WHERE snapshot IS NOT NULL`,
      `CREATE INDEX resources_email_idx ON ${p}resources (email)`,
      // The lists' ranges: a few matches found by these, then sorted, rather than a walk of every row.
      `CREATE INDEX resources_amount_idx ON ${p}resources (amount_value)`,
      `CREATE INDEX resources_created_at_idx ON ${p}resources (created_at)`,
      // The key of the current outcome's handler run: from the few failed or running runs to their resources.
      `CREATE INDEX resources_handler_key_idx ON ${p}resources ((${fulfillmentKeySql('kind', 'id', 'outcome')}))`,
    ],
  },
  {
    version: 3,
    name: 'partner tenants and their merchants',
    statements: ({ prefix: p, types: t }) => [
      // One row per tenant and environment, written before the create call (see `TenantMerchant`).
      `CREATE TABLE ${p}tenant_merchants (
        seq ${t.serialKey},
        tenant_id text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('test', 'live')),
        number integer NOT NULL,
        idempotency_key text NOT NULL,
        request_hash text NOT NULL,
        status text NOT NULL CHECK (status IN ('sending', 'created', 'refused')),
        name text NOT NULL,
        email text NOT NULL,
        merchant_id text UNIQUE,
        snapshot ${t.json},
        created_at ${t.time} NOT NULL,
        updated_at ${t.time} NOT NULL,
        UNIQUE (tenant_id, environment)
      )`,
    ],
  },
  {
    version: 4,
    name: "partner tenants' own credentials, sealed",
    statements: ({ prefix: p, types: t }) => [
      // Sealed with CHECKOUT_SECRETS_KEY before they reach the store (see `SealedTenantCredentials`).
      `CREATE TABLE ${p}tenant_credentials (
        seq ${t.serialKey},
        tenant_id text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('test', 'live')),
        sealed text NOT NULL,
        key_id text NOT NULL,
        updated_at ${t.time} NOT NULL,
        UNIQUE (tenant_id, environment)
      )`,
    ],
  },
  {
    version: 5,
    name: 'attempts that failed only because the service could not be asked',
    // Counted apart, so that an outage never uses up a run's attempts (see `FailOptions.outage`).
    statements: ({ prefix: p }) => [`ALTER TABLE ${p}runs ADD COLUMN outage_attempts integer NOT NULL DEFAULT 0`],
  },
];

/** The version this code needs. */
export const LATEST_VERSION = Math.max(...MIGRATIONS.map((migration) => migration.version));

/** A migration as recorded in the schema: its version, name and when it was applied. */
export interface AppliedMigration {
  version: number;
  name: string;
  appliedAt: string;
}

/** What `migrate` found and applied. */
export interface MigrationReport {
  /** The PostgreSQL schema, or the SQLite file. */
  schema: string;
  /** Versions this call applied (empty when the schema was up to date). */
  applied: Array<{ version: number; name: string }>;
  /** Every version recorded, oldest first. */
  versions: AppliedMigration[];
  /** Highest version recorded. */
  current: number;
}
