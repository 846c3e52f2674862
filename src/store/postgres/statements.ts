import { createHash } from 'node:crypto';
import type { Statement } from './database.js';
import { EVENT_RUN_PREFIX } from '../../runs/keys.js';
import { OUTCOME_RANK } from '../types.js';
import { ATTEMPT_COLUMNS, DEAD_LETTER_COLUMNS, EVENT_COLUMNS, RESOURCE_COLUMNS, RUN_COLUMNS, type RunColumn } from './rows.js';

const PAID_RANK = OUTCOME_RANK.paid;

/** A statement without its values: the store adds them per call. */
export type Prepared = Required<Pick<Statement, 'name' | 'text'>>;

const list = (columns: readonly string[], alias?: string) => columns.map((column) => (alias ? `${alias}.${column}` : column)).join(', ');

/** Where runs live: fulfillment runs in `runs`, each event's dispatch run in the event's own row. */
export type RunTable = 'runs' | 'events';

// Each column of a run as SQL over its table. An event's run has the key `event:<id>`, and as data
// the event's id and type, as `StoreState` gives it.
const RUN_SOURCES: Record<RunTable, Record<RunColumn, string>> = {
  runs: Object.fromEntries(RUN_COLUMNS.map((column) => [column, column])) as Record<RunColumn, string>,
  events: {
    key: `'${EVENT_RUN_PREFIX}' || id`,
    kind: `'event'::text`,
    status: 'status',
    attempts: 'attempts',
    owner: 'owner',
    lease_until: 'lease_until',
    next_attempt_at: 'next_attempt_at',
    last_error: 'last_error',
    data: `jsonb_build_object('eventId', id, 'type', type)`,
    created_at: 'queued_at',
    updated_at: 'updated_at',
    completed_at: 'completed_at',
  },
};

/** The SELECT list giving a `RunRow` (columns prefixed with `prefix`) from `table`. */
export const runSelect = (table: RunTable, prefix = '') => RUN_COLUMNS.map((column) => `${RUN_SOURCES[table][column]} AS ${prefix}${column}`).join(', ');

// A run is claimable when it is pending and due, or running with its lease run out (a crashed or
// stalled worker's): the same rule as `StoreState.claimable`, at time `$at`.
export const claimableAt = (at: string) =>
  `((status = 'pending' AND next_attempt_at <= ${at}) OR (status = 'running' AND (lease_until IS NULL OR lease_until <= ${at})))`;

/**
 * The fixed statements of a store in schema `quoted`, as prepared statements. Names carry a hash
 * of the schema: two stores in different schemas may share a pool, and a connection must never
 * see one name with two texts.
 */
export function buildStatements(quoted: string) {
  const tag = createHash('sha256').update(quoted).digest('hex').slice(0, 8);
  const prepare = (key: string, text: string): Prepared => ({ name: `checkout_kit_${tag}_${key}`, text });
  const s = quoted;

  /** The lease statements of one run table: `$1` is the run's key in `runs`, the event's id in `events`. */
  const leaseStatements = (table: RunTable) => {
    const match = table === 'runs' ? 'key = $1' : 'id = $1';
    const columns = runSelect(table);
    return {
      get: prepare(`${table}_get`, `SELECT ${columns} FROM ${s}.${table} WHERE ${match}`),
      // Concurrent claims of one run queue on its row lock; each re-checks the WHERE against the
      // row the previous one committed (READ COMMITTED), so exactly one wins.
      claim: prepare(
        `${table}_claim`,
        `UPDATE ${s}.${table}
        SET status = 'running', owner = $2, lease_until = $4::timestamptz, attempts = attempts + 1, updated_at = $3::timestamptz
        WHERE ${match} AND ${claimableAt('$3::timestamptz')}
        RETURNING ${columns}`,
      ),
      renew: prepare(
        `${table}_renew`,
        `UPDATE ${s}.${table}
        SET lease_until = $4::timestamptz, updated_at = $3::timestamptz
        WHERE ${match} AND status = 'running' AND owner = $2`,
      ),
      complete: prepare(
        `${table}_complete`,
        `UPDATE ${s}.${table}
        SET status = 'done', lease_until = NULL, last_error = NULL, completed_at = $3::timestamptz, updated_at = $3::timestamptz
        WHERE ${match} AND status = 'running' AND owner = $2`,
      ),
      fail: prepare(
        `${table}_fail`,
        `UPDATE ${s}.${table}
        SET status = CASE WHEN $4::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
            next_attempt_at = COALESCE($4::timestamptz, next_attempt_at),
            lease_until = NULL, owner = NULL, last_error = $5, updated_at = $3::timestamptz
        WHERE ${match} AND status = 'running' AND owner = $2`,
      ),
      retry: prepare(
        `${table}_retry`,
        `UPDATE ${s}.${table}
        SET status = 'pending', attempts = 0, next_attempt_at = $2::timestamptz, updated_at = $2::timestamptz
        WHERE ${match} AND status = 'failed'`,
      ),
    };
  };

  return {
    runs: leaseStatements('runs'),
    eventRuns: leaseStatements('events'),
    // The hot path: one statement for a batch of deliveries (see GroupCommit), one row each. An
    // event and its dispatch run (pending, due now) are the same row, so they are stored together
    // or not at all. An id already stored, or met earlier in the same batch, inserts nothing and
    // returns nothing.
    insertEvents: prepare(
      'insertEvents',
      `INSERT INTO ${s}.events (${list(EVENT_COLUMNS)}, status, next_attempt_at, queued_at, updated_at)
      SELECT ${list(EVENT_COLUMNS)}, 'pending', $10::timestamptz, $10::timestamptz, $10::timestamptz
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[], $9::boolean[])
        AS e(${list(EVENT_COLUMNS)})
      ON CONFLICT (id) DO NOTHING
      RETURNING id`,
    ),
    getEvent: prepare('getEvent', `SELECT ${list(EVENT_COLUMNS)} FROM ${s}.events WHERE id = $1`),
    insertDeadLetter: prepare('insertDeadLetter', `
      INSERT INTO ${s}.dead_letters (id, received_at, reason, body, body_escaped, headers)
      VALUES ($1, $2::timestamptz, $3, $4, $5, $6::jsonb)
      RETURNING ${list(DEAD_LETTER_COLUMNS)}`),
    listDeadLetters: prepare('listDeadLetters', `SELECT ${list(DEAD_LETTER_COLUMNS)} FROM ${s}.dead_letters ORDER BY seq DESC LIMIT $1 OFFSET $2`),
    enqueueRun: prepare('enqueueRun', `
      INSERT INTO ${s}.runs (key, kind, status, attempts, next_attempt_at, data, created_at, updated_at)
      VALUES ($1, $2, 'pending', 0, COALESCE($3::timestamptz, $4::timestamptz), $5::jsonb, $4::timestamptz, $4::timestamptz)
      ON CONFLICT (key) DO NOTHING
      RETURNING ${runSelect('runs')}`),
    // A resource seen for the first time: the caller has computed the whole record.
    insertResource: prepare('insertResource', `
      INSERT INTO ${s}.resources (kind, id, environment, order_id, outcome, outcome_rank, outcome_source, snapshot, expires_at, last_news_at, open, late, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::timestamptz, $11, $12::boolean, $10::timestamptz, $10::timestamptz)
      ON CONFLICT (kind, id) DO NOTHING
      RETURNING ${list(RESOURCE_COLUMNS)}`),
    // A known resource: the forward-only rule of `StoreState.updateResource`, on the locked row.
    // `before` locks the row and reads the rank it had, so the caller learns whether this update
    // advanced it; in SET, `r.*` is that same row before the update. $3 is the proposed outcome's
    // rank (NULL when none is proposed): it wins only when strictly higher, and a snapshot or
    // expiry comes along only when the proposed outcome is not behind the stored one.
    updateResource: prepare('updateResource', `
      UPDATE ${s}.resources r
      SET outcome = CASE WHEN $3::smallint > r.outcome_rank THEN $4 ELSE r.outcome END,
          outcome_source = CASE WHEN $3::smallint > r.outcome_rank THEN $5 ELSE r.outcome_source END,
          outcome_rank = GREATEST(r.outcome_rank, $3::smallint),
          late = CASE WHEN $3::smallint > r.outcome_rank AND $3::smallint = ${PAID_RANK} THEN COALESCE($12::boolean, false) ELSE r.late END,
          snapshot = CASE WHEN $6::jsonb IS NOT NULL AND ($3::smallint IS NULL OR $3::smallint >= r.outcome_rank) THEN $6::jsonb ELSE r.snapshot END,
          expires_at = CASE WHEN $7::text IS NOT NULL AND ($3::smallint IS NULL OR $3::smallint >= r.outcome_rank) THEN $7::text ELSE r.expires_at END,
          environment = COALESCE($8, r.environment),
          order_id = COALESCE($9, r.order_id),
          open = COALESCE($10::boolean, r.open),
          last_news_at = $11::timestamptz,
          updated_at = $11::timestamptz
      FROM (SELECT outcome_rank FROM ${s}.resources WHERE kind = $1 AND id = $2 FOR UPDATE) AS before
      WHERE r.kind = $1 AND r.id = $2
      RETURNING ${list(RESOURCE_COLUMNS, 'r')}, before.outcome_rank AS before_rank`),
    getResource: prepare('getResource', `SELECT ${list(RESOURCE_COLUMNS)} FROM ${s}.resources WHERE kind = $1 AND id = $2`),

    putCheckoutAttempt: prepare('putCheckoutAttempt', `
      INSERT INTO ${s}.checkout_attempts AS a (order_id, kind, idempotency_key, request_hash, number, status, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $6, 'sending', $5::timestamptz, $5::timestamptz)
      ON CONFLICT (order_id) DO UPDATE
        SET kind = EXCLUDED.kind, idempotency_key = EXCLUDED.idempotency_key, request_hash = EXCLUDED.request_hash, number = EXCLUDED.number,
            status = 'sending', resource_id = NULL, checkout_url = NULL, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
        WHERE a.status = 'refused' AND a.number + 1 = EXCLUDED.number
      RETURNING ${list(ATTEMPT_COLUMNS)}`),
    // Only the sending attempt of that number: a late refusal never releases a newer attempt.
    releaseCheckoutAttempt: prepare('releaseCheckoutAttempt', `
      UPDATE ${s}.checkout_attempts SET status = 'refused', updated_at = $3::timestamptz
      WHERE order_id = $1 AND status = 'sending' AND number = $2`),
    completeCheckoutAttempt: prepare('completeCheckoutAttempt', `
      UPDATE ${s}.checkout_attempts
      SET status = 'created', resource_id = $2, checkout_url = $3, updated_at = $4::timestamptz
      WHERE order_id = $1
      RETURNING ${list(ATTEMPT_COLUMNS)}`),
    getCheckoutAttempt: prepare('getCheckoutAttempt', `SELECT ${list(ATTEMPT_COLUMNS)} FROM ${s}.checkout_attempts WHERE order_id = $1`),

    // Taken when free, expired, or already ours (a renewal).
    acquireLock: prepare('acquireLock', `
      INSERT INTO ${s}.locks AS l (name, owner, expires_at) VALUES ($1, $2, $4::timestamptz)
      ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
      WHERE l.owner = EXCLUDED.owner OR l.expires_at <= $3::timestamptz
      RETURNING name`),
    releaseLock: prepare('releaseLock', `DELETE FROM ${s}.locks WHERE name = $1 AND owner = $2`),

    // Prune never touches an event whose dispatch is unfinished; the status is re-checked on each
    // locked row, so a run revived meanwhile by retryRun keeps its event and payload.
    forgetEvents: prepare('forgetEvents', `DELETE FROM ${s}.events WHERE received_at < $1::timestamptz AND status IN ('done', 'failed')`),
    forgetActivity: prepare('forgetActivity', `DELETE FROM ${s}.activity WHERE at < $1::timestamptz`),

    appendActivity: prepare('appendActivity', `INSERT INTO ${s}.activity (subject, kind, at, data) VALUES ($1, $2, $3::timestamptz, $4::jsonb)`),
    listActivity: prepare('listActivity', `SELECT subject, kind, at, data FROM ${s}.activity WHERE subject = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`),
    // The overview's counts: each from an index (received_at, the active and failed partial
    // indexes, open resources, resources learned by reconcile), never a scan of every event.
    summarizeEvents: prepare('summarizeEvents', `
      SELECT type, count(*) FILTER (WHERE received_at >= $1::timestamptz)::int AS last_hour, count(*)::int AS last_day
      FROM ${s}.events WHERE received_at >= $2::timestamptz GROUP BY type`),
    summarizeBacklog: prepare('summarizeBacklog', `
      SELECT 'event' AS kind, status, count(*)::int AS n, min(next_attempt_at) AS oldest FROM ${s}.events WHERE status IN ('pending', 'running') GROUP BY status
      UNION ALL SELECT 'event', 'failed', count(*)::int, NULL FROM ${s}.events WHERE status = 'failed'
      UNION ALL SELECT 'fulfillment', status, count(*)::int, NULL FROM ${s}.runs WHERE status IN ('pending', 'running') GROUP BY status
      UNION ALL SELECT 'fulfillment', 'failed', count(*)::int, NULL FROM ${s}.runs WHERE status = 'failed'`),
    summarizeResources: prepare('summarizeResources', `
      SELECT 'open' AS what, kind, count(*)::int AS n FROM ${s}.resources WHERE open GROUP BY kind
      UNION ALL SELECT 'reconcile', kind, count(*)::int FROM ${s}.resources WHERE outcome_source = 'reconcile' GROUP BY kind
      UNION ALL SELECT 'dead', 'letters', count(*)::int FROM ${s}.dead_letters`),
    prunePayloads: prepare('prunePayloads', `
      UPDATE ${s}.events SET body = NULL, body_escaped = false
      WHERE received_at < $1::timestamptz AND body IS NOT NULL AND status IN ('done', 'failed')`),
  };
}

export type Statements = ReturnType<typeof buildStatements>;
export type LeaseStatements = Statements['runs'];
