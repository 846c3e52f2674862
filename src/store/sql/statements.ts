import { EVENT_RUN_PREFIX } from '../../domain/index.js';
import { OUTCOME_RANK } from '../types.js';
import type { Statement } from './database.js';
import type { Dialect } from './dialect.js';
import { ACTIVITY, ATTEMPT, DEAD_LETTER, EVENT, RESOURCE, RUN, TENANT_CREDENTIALS, TENANT_MERCHANT } from './rows.js';

/** A statement without its values: the store adds them per call. */
export type Prepared = Required<Pick<Statement, 'name' | 'text'>>;

const list = (columns: readonly string[], alias?: string) => columns.map((column) => (alias ? `${alias}.${column}` : column)).join(', ');
const placeholders = (from: number, count: number) => Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');
/** `($1, $2), ($3, $4)…`: `count` tuples of `width` parameters each. */
export const tuples = (count: number, width: number) => Array.from({ length: count }, (_, i) => `(${placeholders(1 + i * width, width)})`).join(', ');

export const RUN_LIST = list(RUN.columns);

/** Claimable at `at`: pending and due, or running with its lease run out (a crashed or stalled worker's). */
export const claimableAt = (at: string) =>
  `((status = 'pending' AND next_attempt_at <= ${at}) OR (status = 'running' AND (lease_until IS NULL OR lease_until <= ${at})))`;

/** The key of event `id`'s dispatch run, in SQL. */
const eventRunKey = (id: string) => `'${EVENT_RUN_PREFIX}' || ${id}`;

/** A short, stable hash of `text` (32-bit FNV-1a, hex): names, not security, and no node:crypto to load at open. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/**
 * Every fixed statement of the store, for one dialect, named after its key. Names carry a hash of
 * the dialect's prefix: two PostgreSQL stores in different schemas may share a pool, and a
 * connection must never see one name with two texts.
 */
export function buildStatements(d: Dialect) {
  const tag = fnv1a(`${d.name} ${d.prefix}`);
  const prepare = (key: string, text: string): Prepared => ({ name: `checkout_kit_${tag}_${key}`, text });
  /** Each text as a statement named `group` + its key. */
  const named = <K extends string>(group: string, texts: Record<K, string>) =>
    Object.fromEntries(Object.entries<string>(texts).map(([key, text]) => [key, prepare(`${group}${key}`, text)])) as Record<K, Prepared>;
  /** A statement of `count` rows at once, named after `key` and the count. */
  const batch = (key: string, text: (count: number) => string) => (count: number) => prepare(`${key}_${count}`, text(count));
  const p = d.prefix;
  /** `upsertResource`'s tests of the proposed outcome's rank `$13` against the stored one (see there). */
  const rank = d.cast('$13', 'smallint');
  const advances = `${rank} > r.outcome_rank`;
  const notBehind = `(${rank} IS NULL OR ${rank} >= r.outcome_rank)`;
  const snapshotTaken = `${d.cast('$8', 'json')} IS NOT NULL AND ${notBehind}`;
  /**
   * A table of create-once tries (checkout attempts, tenants' merchants) by `key`. `put` (values: the key,
   * `given`, idempotency key, request hash, number, now) inserts a `sending` try, or replaces a refused one
   * by the next number; any other stands. `release` (the key, number, now) refuses only the `sending` try
   * of that number: a late refusal never releases a newer try. `made`: what a created try has.
   */
  const tries = (table: string, key: string[], given: string[], made: string[], returning: readonly string[]) => {
    const columns = [...key, ...given, 'idempotency_key', 'request_hash', 'number'];
    const now = `$${columns.length + 1}`;
    const replaced = [...columns.slice(key.length), 'created_at', 'updated_at'].map((column) => `${column} = excluded.${column}`);
    return {
      put: `INSERT INTO ${p}${table} AS t (${columns.join(', ')}, status, created_at, updated_at) VALUES (${placeholders(1, columns.length)}, 'sending', ${now}, ${now})
        ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${[...replaced, `status = 'sending'`, ...made.map((column) => `${column} = NULL`)].join(', ')}
        WHERE t.status = 'refused' AND t.number + 1 = excluded.number
        RETURNING ${list(returning)}`,
      release: `UPDATE ${p}${table} SET status = 'refused', updated_at = $${key.length + 2}
        WHERE ${key.map((column, i) => `${column} = $${i + 1}`).join(' AND ')} AND status = 'sending' AND number = $${key.length + 1}`,
    };
  };
  const attempts = tries('checkout_attempts', ['order_id'], ['kind'], ['resource_id', 'checkout_url'], ATTEMPT.columns);
  const merchants = tries('tenant_merchants', ['tenant_id', 'environment'], ['name', 'email'], ['merchant_id', 'snapshot'], TENANT_MERCHANT.columns);

  return {
    // The run queue: each statement is one guarded write, and only the lease holder may finish.
    runs: named('run_', {
      get: `SELECT ${RUN_LIST} FROM ${p}runs WHERE key = $1`,
      // Of concurrent claims exactly one matches the guard: PostgreSQL re-checks it on the row the
      // previous claimer committed; SQLite has one writer at a time.
      claim: `UPDATE ${p}runs
        SET status = 'running', owner = $2, lease_until = $4, attempts = attempts + 1, updated_at = $3
        WHERE key = $1 AND ${claimableAt('$3')}
        RETURNING ${RUN_LIST}`,
      renew: `UPDATE ${p}runs SET lease_until = $4, updated_at = $3 WHERE key = $1 AND status = 'running' AND owner = $2`,
      complete: `UPDATE ${p}runs
        SET status = 'done', lease_until = NULL, last_error = NULL, completed_at = $3, updated_at = $3
        WHERE key = $1 AND status = 'running' AND owner = $2`,
      fail: `UPDATE ${p}runs
        SET status = CASE WHEN ${d.cast('$4', 'time')} IS NULL THEN 'failed' ELSE 'pending' END,
            next_attempt_at = COALESCE(${d.cast('$4', 'time')}, next_attempt_at),
            lease_until = NULL, owner = NULL, last_error = $5, updated_at = $3, outage_attempts = outage_attempts + $6
        WHERE key = $1 AND status = 'running' AND owner = $2`,
      retry: `UPDATE ${p}runs SET status = 'pending', attempts = 0, outage_attempts = 0, next_attempt_at = $2, updated_at = $2 WHERE key = $1 AND status = 'failed'`,
      enqueue: `INSERT INTO ${p}runs (key, kind, status, attempts, next_attempt_at, data, created_at, updated_at)
        VALUES ($1, $2, 'pending', 0, $3, ${d.cast('$4', 'json')}, $5, $5)
        ON CONFLICT (key) DO NOTHING
        RETURNING ${RUN_LIST}`,
    }),

    /** `count` events in one statement: an id already stored, or met earlier in the statement, inserts and returns nothing. */
    insertEvents: batch(
      'insert_events',
      (count) => `INSERT INTO ${p}events (${list(EVENT.columns)})
      VALUES ${tuples(count, EVENT.columns.length)}
      ON CONFLICT (id) DO NOTHING
      RETURNING id`,
    ),
    /** The dispatch runs of `count` events just inserted: key, the time it is due (and made) and data of each. */
    insertEventRuns: batch(
      'insert_event_runs',
      (count) => `INSERT INTO ${p}runs (key, kind, status, attempts, next_attempt_at, data, created_at, updated_at)
      VALUES ${Array.from({ length: count }, (_, i) => {
        const [key, at, data] = [1, 2, 3].map((n) => `$${n + i * 3}`);
        return `(${key}, 'event', 'pending', 0, ${at}, ${d.cast(data!, 'json')}, ${at}, ${at})`;
      }).join(', ')}`,
    ),
    /** Events with their dispatch run (`run_` columns), for `listEvents` to add its filter to. */
    eventsWithRuns: `SELECT ${list(EVENT.columns, 'e')}, ${RUN.columns.map((column) => `r.${column} AS run_${column}`).join(', ')}
      FROM ${p}events e LEFT JOIN ${p}runs r ON r.key = ${eventRunKey('e.id')}`,

    ...named('', {
      getEvent: `SELECT ${list(EVENT.columns)} FROM ${p}events WHERE id = $1`,
      insertDeadLetter: `INSERT INTO ${p}dead_letters (id, received_at, reason, body, body_escaped, headers)
        VALUES ($1, $2, $3, $4, $5, ${d.cast('$6', 'json')})
        RETURNING ${list(DEAD_LETTER.columns)}`,
      listDeadLetters: `SELECT ${list(DEAD_LETTER.columns)} FROM ${p}dead_letters ORDER BY seq DESC LIMIT $1 OFFSET $2`,

      /**
       * The forward-only rule, in one statement: a resource seen for the first time is inserted as
       * the caller computed it; a known one takes only what moves it forward. `$13` is the proposed
       * outcome's rank (NULL when none is proposed): it wins only when strictly higher, and a
       * snapshot or expiry comes along only when the proposal is not behind the stored outcome.
       * `$14` names this update: `advanced_by` returns it when this update moved the outcome.
       * `$19` and `$20` are the snapshot's e-mail and amount, kept with it for the operator's search.
       */
      upsertResource: `INSERT INTO ${p}resources AS r (kind, id, environment, order_id, outcome, outcome_rank, outcome_source, snapshot, expires_at, last_news_at, open, late, advanced_by, created_at, updated_at, email, amount_value)
        VALUES ($1, $2, $3, $4, $5, $6, $7, ${d.cast('$8', 'json')}, $9, $10, $11, $12, $15, $10, $10, $19, ${d.cast('$20', 'decimal')})
        ON CONFLICT (kind, id) DO UPDATE SET
          outcome = CASE WHEN ${advances} THEN $16 ELSE r.outcome END,
          outcome_source = CASE WHEN ${advances} THEN $7 ELSE r.outcome_source END,
          late = CASE WHEN ${advances} AND ${rank} = ${OUTCOME_RANK.paid} THEN COALESCE(${d.cast('$17', 'bool')}, false) ELSE r.late END,
          advanced_by = CASE WHEN ${advances} THEN $14 ELSE r.advanced_by END,
          outcome_rank = CASE WHEN ${advances} THEN ${rank} ELSE r.outcome_rank END,
          snapshot = CASE WHEN ${snapshotTaken} THEN ${d.cast('$8', 'json')} ELSE r.snapshot END,
          email = CASE WHEN ${snapshotTaken} THEN ${d.cast('$19', 'text')} ELSE r.email END,
          amount_value = CASE WHEN ${snapshotTaken} THEN ${d.cast('$20', 'decimal')} ELSE r.amount_value END,
          expires_at = CASE WHEN ${d.cast('$9', 'text')} IS NOT NULL AND ${notBehind} THEN ${d.cast('$9', 'text')} ELSE r.expires_at END,
          environment = COALESCE(${d.cast('$3', 'text')}, r.environment),
          -- An order id given overrides; the referenceId only fills in one never given (a tenant's order keeps its tenant).
          order_id = COALESCE(${d.cast('$21', 'text')}, r.order_id, ${d.cast('$4', 'text')}),
          open = COALESCE(${d.cast('$18', 'bool')}, r.open),
          last_news_at = $10,
          updated_at = $10
        RETURNING ${list(RESOURCE.columns)}, advanced_by`,
      getResource: `SELECT ${list(RESOURCE.columns)} FROM ${p}resources WHERE kind = $1 AND id = $2`,

      putCheckoutAttempt: attempts.put,
      releaseCheckoutAttempt: attempts.release,
      completeCheckoutAttempt: `UPDATE ${p}checkout_attempts SET status = 'created', resource_id = $2, checkout_url = $3, updated_at = $4 WHERE order_id = $1
        RETURNING ${list(ATTEMPT.columns)}`,
      getCheckoutAttempt: `SELECT ${list(ATTEMPT.columns)} FROM ${p}checkout_attempts WHERE order_id = $1`,

      putTenantMerchant: merchants.put,
      releaseTenantMerchant: merchants.release,
      // A created merchant is never replaced: a second answer (a replay of the same key) changes nothing.
      completeTenantMerchant: `UPDATE ${p}tenant_merchants SET status = 'created', merchant_id = $3, snapshot = ${d.cast('$4', 'json')}, updated_at = $5
        WHERE tenant_id = $1 AND environment = $2 AND status = 'sending'
        RETURNING ${list(TENANT_MERCHANT.columns)}`,
      getTenantMerchant: `SELECT ${list(TENANT_MERCHANT.columns)} FROM ${p}tenant_merchants WHERE tenant_id = $1 AND environment = $2`,
      findTenantByMerchantId: `SELECT ${list(TENANT_MERCHANT.columns)} FROM ${p}tenant_merchants WHERE merchant_id = $1`,
      listTenantMerchants: `SELECT ${list(TENANT_MERCHANT.columns)} FROM ${p}tenant_merchants
        WHERE (${d.cast('$1', 'text')} IS NULL OR environment = $1) ORDER BY seq LIMIT $2 OFFSET $3`,

      // Only where there are none: two first saves at once must not overwrite each other (the second merges and re-seals).
      putTenantCredentials: `INSERT INTO ${p}tenant_credentials (tenant_id, environment, sealed, key_id, updated_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (tenant_id, environment) DO NOTHING`,
      // Only if still what was read: a rotation never overwrites credentials stored since.
      resealTenantCredentials: `UPDATE ${p}tenant_credentials SET sealed = $4, key_id = $5, updated_at = $6 WHERE tenant_id = $1 AND environment = $2 AND sealed = $3`,
      deleteTenantCredentials: `DELETE FROM ${p}tenant_credentials WHERE tenant_id = $1 AND environment = $2`,
      getTenantCredentials: `SELECT ${list(TENANT_CREDENTIALS.columns)} FROM ${p}tenant_credentials WHERE tenant_id = $1 AND environment = $2`,
      listTenantCredentials: `SELECT ${list(TENANT_CREDENTIALS.columns)} FROM ${p}tenant_credentials ORDER BY seq LIMIT $1 OFFSET $2`,

      // Taken when free, expired, or already ours (a renewal).
      acquireLock: `INSERT INTO ${p}locks AS l (name, owner, expires_at) VALUES ($1, $2, $4)
        ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
        WHERE l.owner = excluded.owner OR l.expires_at <= ${d.cast('$3', 'time')}
        RETURNING name`,
      releaseLock: `DELETE FROM ${p}locks WHERE name = $1 AND owner = $2`,

      // Prune never touches an event whose dispatch is unfinished: its run goes first, guarded by
      // its status, and an event goes only once its run has.
      forgetEventRuns: `DELETE FROM ${p}runs WHERE kind = 'event' AND status IN ('done', 'failed')
        AND key IN (SELECT ${eventRunKey('id')} FROM ${p}events WHERE received_at < $1)`,
      forgetEvents: `DELETE FROM ${p}events WHERE received_at < $1 AND NOT EXISTS (SELECT 1 FROM ${p}runs r WHERE r.key = ${eventRunKey(`${p}events.id`)})`,
      forgetActivity: `DELETE FROM ${p}activity WHERE at < $1`,
      prunePayloads: `UPDATE ${p}events SET body = NULL, body_escaped = $2
        WHERE received_at < $1 AND body IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM ${p}runs r WHERE r.key = ${eventRunKey(`${p}events.id`)} AND r.status IN ('pending', 'running'))`,

      appendActivity: `INSERT INTO ${p}activity (subject, kind, at, data) VALUES ($1, $2, $3, ${d.cast('$4', 'json')})`,
      listActivity: `SELECT ${list(ACTIVITY.columns)} FROM ${p}activity WHERE subject = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`,

      // The overview's counts: each from an index (received_at, the active and failed partial
      // indexes, open resources, resources learned by reconcile), never a scan of every event.
      summarizeEvents: `SELECT type, count(*) FILTER (WHERE received_at >= $1) AS last_hour, count(*) AS last_day
        FROM ${p}events WHERE received_at >= $2 GROUP BY type`,
      summarizeBacklog: `SELECT kind, status, count(*) AS n, min(next_attempt_at) AS oldest FROM ${p}runs WHERE status IN ('pending', 'running') GROUP BY kind, status
        UNION ALL SELECT kind, 'failed', count(*), NULL FROM ${p}runs WHERE status = 'failed' GROUP BY kind`,
      summarizeResources: `SELECT 'open' AS what, kind, count(*) AS n FROM ${p}resources WHERE open GROUP BY kind
        UNION ALL SELECT 'reconcile', kind, count(*) FROM ${p}resources WHERE outcome_source = 'reconcile' GROUP BY kind
        UNION ALL SELECT 'dead', 'letters', count(*) FROM ${p}dead_letters`,
    }),
  };
}

export type Statements = ReturnType<typeof buildStatements>;
