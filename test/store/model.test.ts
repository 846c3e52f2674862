import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import type { Environment } from '../../src/schemas/index.js';
import {
  EmbeddedStore,
  MemoryStore,
  StateStore,
  type NewsSource,
  type Outcome,
  type ResourceKind,
  type ResourceUpdate,
  type Run,
  type Store,
} from '../../src/store/index.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { sampleBody } from './fixtures/sample-event.js';

/**
 * Model test: random sequences of `Store` calls against `MemoryStore` (the model) and an
 * `EmbeddedStore`. After every call the embedded store is closed and a new instance opens the
 * folder (replaying snapshot + journal), and a second instance opened before the sequence catches
 * up; both must answer every read exactly as the memory store does. A journal that cannot carry an
 * op (the `renew` hole) or replays it differently fails here.
 */

afterEach(() => removeTempDirs());

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

// Small pools, so that calls collide.
const EVENT_IDS = ['e1', 'e2', 'constructor'] as const;
const RUN_KEYS = ['job:a', 'job:b', 'event:e1', 'event:e2'] as const;
const OWNERS = ['w1', 'w2'] as const;
const RESOURCES: Array<[ResourceKind, string]> = [
  ['payment', 'r1'],
  ['invoice', 'r1'],
  ['payment', 'r2'],
];
const ORDERS = ['o1', 'o2'] as const;
const LOCKS = ['reconcile', 'other'] as const;
const OUTCOMES: Outcome[] = ['pending', 'underpaid', 'expired', 'paid', 'overpaid'];
const SOURCES: NewsSource[] = ['webhook', 'reconcile', 'return', 'checkout'];
const ENVIRONMENTS: Environment[] = ['test', 'live'];

/** Times are offsets from the simulated clock at the moment of the call. */
const offset = fc.constantFrom(-60_000, -1_000, 0, 1, 1_000, 60_000);
const leaseMs = fc.constantFrom(1_000, 30_000, 60_000);
const SHORT_BODY = '{"a":"\u2028 é 😀 ,\\"body\\":\\"x"}';

/**
 * Symbolic arguments, resolved from the model's state just before the call (both stores then get
 * the same concrete call), so that random sequences often hit: owner `holder` is whoever holds the
 * run's lease; run key `@due` is the first claimable run, `@running` (`@failed`) the first run
 * with that status; attempt number `@current` (`@next`) is the order's attempt number (plus one).
 */
type Owner = (typeof OWNERS)[number] | 'holder';
type RunKeyArg = (typeof RUN_KEYS)[number] | '@due' | '@running' | '@failed';
type AttemptNumber = number | '@current' | '@next';

type Call =
  | {
      m: 'insertEvent';
      id: (typeof EVENT_IDS)[number];
      type: string;
      receivedOffset: number;
      body: 'sample' | 'short' | 'none';
      environment: Environment | undefined;
      resource: number | undefined;
    }
  | { m: 'insertDeadLetter'; reason: string; body: string; headers: Record<string, string> }
  | { m: 'enqueueRun'; key: (typeof RUN_KEYS)[number]; kind: Run['kind']; data: Record<string, unknown>; dueOffset: number | undefined }
  | { m: 'claimRun'; key: RunKeyArg; owner: Owner; leaseMs: number }
  | { m: 'renewLease'; key: RunKeyArg; owner: Owner; leaseMs: number }
  | { m: 'completeRun'; key: RunKeyArg; owner: Owner }
  | { m: 'failRun'; key: RunKeyArg; owner: Owner; error: string; retryOffset: number | undefined }
  | { m: 'retryRun'; key: RunKeyArg }
  | { m: 'updateResource'; update: Omit<ResourceUpdate, 'expiresAt'>; expiresOffset: number | undefined }
  | { m: 'putCheckoutAttempt'; orderId: string; kind: ResourceKind; idempotencyKey: string; requestHash: string; number: AttemptNumber | undefined }
  | { m: 'completeCheckoutAttempt'; orderId: string; resourceId: string; checkoutUrl: string | undefined }
  | { m: 'releaseCheckoutAttempt'; orderId: string; number: AttemptNumber }
  | { m: 'acquireLock'; name: string; owner: (typeof OWNERS)[number]; ttlMs: number }
  | { m: 'releaseLock'; name: string; owner: (typeof OWNERS)[number] }
  | { m: 'prune'; payloadsOffset: number | undefined; eventsOffset: number | undefined }
  | { m: 'appendActivity'; subject: string; kind: string; data: Record<string, unknown> }
  | { m: 'compact' };

/** One step: advance the clock by `step` ms, then make `call` through the embedded instance `via`. */
type Command = Call & { step: number; via: 'fresh' | 'long' };

/** The read methods, compared after every call; every other method of a `StateStore` writes. */
const READ_METHODS = ['getEvent', 'listEvents', 'listDeadLetters', 'getRun', 'listRuns', 'countRuns', 'getResource', 'listResources', 'getCheckoutAttempt', 'listActivity', 'summarize'] as const;
/** Every write method (and `EmbeddedStore.compact`): a `Record`, so that a `Call` without its entry does not compile. */
const WRITES: Record<Call['m'], true> = {
  insertEvent: true,
  insertDeadLetter: true,
  enqueueRun: true,
  claimRun: true,
  renewLease: true,
  completeRun: true,
  failRun: true,
  retryRun: true,
  updateResource: true,
  putCheckoutAttempt: true,
  completeCheckoutAttempt: true,
  releaseCheckoutAttempt: true,
  acquireLock: true,
  releaseLock: true,
  prune: true,
  appendActivity: true,
  compact: true,
};
const WRITE_METHODS = Object.keys(WRITES);
/** A `Store` method that is neither a read nor a `Call` is a write this test does not make. */
type Untested = Exclude<keyof Store, 'description' | 'open' | 'close' | (typeof READ_METHODS)[number] | Call['m']>;
const untested: [Untested] extends [never] ? true : Untested = true;

/**
 * What must have happened at least once over all runs: not merely each method called, but each
 * one changing the state (a refused renew writes no journal line and proves nothing).
 */
const REQUIRED_EFFECTS = [
  'insertEvent:inserted',
  'insertEvent:duplicate',
  'insertDeadLetter',
  'enqueueRun:inserted',
  'claimRun:claimed',
  'claimRun:reclaimed',
  'renewLease:renewed',
  'completeRun:completed',
  'failRun:retryAt',
  'failRun:gaveUp',
  'retryRun:retried',
  'updateResource:advanced',
  'updateResource:late',
  'putCheckoutAttempt:inserted',
  'putCheckoutAttempt:next-number',
  'completeCheckoutAttempt:completed',
  'completeCheckoutAttempt:missing',
  'releaseCheckoutAttempt:released',
  'acquireLock:acquired',
  'acquireLock:refused',
  'releaseLock:released',
  'prune:payloads',
  'prune:forgotten',
  'appendActivity',
  'compact',
] as const;

/** A run key from the pool, or (as often as all of them together) one of `symbolic`. */
const runKey = (...symbolic: RunKeyArg[]) => fc.oneof(fc.constantFrom<RunKeyArg>(...RUN_KEYS), fc.constantFrom(...symbolic));
const owner = fc.constantFrom<Owner>(...OWNERS, 'holder', 'holder');
const orderId = fc.constantFrom(...ORDERS);

const callArb: fc.Arbitrary<Call> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      m: fc.constant('insertEvent' as const),
      id: fc.constantFrom(...EVENT_IDS),
      type: fc.constantFrom('payment.paid', 'invoice.paid'),
      receivedOffset: fc.constantFrom(-60_000, -1_000, 0, 0, 1_000),
      body: fc.constantFrom('sample' as const, 'short' as const, 'none' as const),
      environment: fc.option(fc.constantFrom(...ENVIRONMENTS), { nil: undefined }),
      resource: fc.option(fc.nat(RESOURCES.length - 1), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      m: fc.constant('insertDeadLetter' as const),
      reason: fc.constantFrom('bad JSON', 'unknown type'),
      body: fc.constantFrom('{"x":', SHORT_BODY),
      headers: fc.constantFrom<Record<string, string>>({}, { 'webhook-id': 'msg_1', 'content-type': 'application/json' }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      m: fc.constant('enqueueRun' as const),
      key: fc.constantFrom(...RUN_KEYS),
      kind: fc.constantFrom('event' as const, 'fulfillment' as const),
      data: fc.constantFrom<Record<string, unknown>>({}, { resource: 'payment:r1', outcome: 'paid' }),
      dueOffset: fc.option(offset, { nil: undefined }),
    }),
  },
  { weight: 5, arbitrary: fc.record({ m: fc.constant('claimRun' as const), key: runKey('@due'), owner, leaseMs }) },
  { weight: 3, arbitrary: fc.record({ m: fc.constant('renewLease' as const), key: runKey('@running'), owner, leaseMs }) },
  { weight: 3, arbitrary: fc.record({ m: fc.constant('completeRun' as const), key: runKey('@running'), owner }) },
  {
    weight: 3,
    arbitrary: fc.record({
      m: fc.constant('failRun' as const),
      key: runKey('@running'),
      owner,
      error: fc.constantFrom('boom', 'timeout "x"'),
      retryOffset: fc.option(fc.constantFrom(-1_000, 0, 1_000, 60_000), { nil: undefined }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ m: fc.constant('retryRun' as const), key: runKey('@failed') }) },
  {
    weight: 3,
    arbitrary: fc.record({
      m: fc.constant('updateResource' as const),
      update: fc
        .tuple(
          fc.nat(RESOURCES.length - 1),
          fc.record(
            {
              environment: fc.constantFrom(...ENVIRONMENTS),
              orderId: orderId,
              outcome: fc.constantFrom(...OUTCOMES),
              source: fc.constantFrom(...SOURCES),
              late: fc.boolean(),
              snapshot: fc.constantFrom({ amount: '1.00' }, { amount: '2.00', status: 'PAID', nested: { n: 1 } }),
              open: fc.boolean(),
            },
            { requiredKeys: [] },
          ),
        )
        .map(([i, rest]) => {
          const [kind, id] = RESOURCES[i] as [ResourceKind, string];
          return { kind, id, ...rest };
        }),
      expiresOffset: fc.option(offset, { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      m: fc.constant('putCheckoutAttempt' as const),
      orderId,
      kind: fc.constantFrom('payment' as const, 'invoice' as const),
      idempotencyKey: fc.constantFrom('k1', 'k2', 'k3'),
      requestHash: fc.constantFrom('h1', 'h2'),
      number: fc.option(fc.constantFrom<AttemptNumber>(1, 2, 3, '@next', '@next'), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      m: fc.constant('completeCheckoutAttempt' as const),
      orderId,
      resourceId: fc.constantFrom('r1', 'r2'),
      checkoutUrl: fc.option(fc.constant('https://pay.example/c/1'), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ m: fc.constant('releaseCheckoutAttempt' as const), orderId, number: fc.constantFrom<AttemptNumber>(1, 2, '@current', '@current') }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ m: fc.constant('acquireLock' as const), name: fc.constantFrom(...LOCKS), owner: fc.constantFrom(...OWNERS), ttlMs: leaseMs }),
  },
  { weight: 1, arbitrary: fc.record({ m: fc.constant('releaseLock' as const), name: fc.constantFrom(...LOCKS), owner: fc.constantFrom(...OWNERS) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      m: fc.constant('prune' as const),
      payloadsOffset: fc.option(fc.constantFrom(-60_000, 0, 1), { nil: undefined }),
      eventsOffset: fc.option(fc.constantFrom(-60_000, 0, 1), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      m: fc.constant('appendActivity' as const),
      subject: fc.constantFrom('payment:r1', 'reconcile'),
      kind: fc.constantFrom('news', 'handler'),
      data: fc.constantFrom<Record<string, unknown>>({}, { outcome: 'paid', error: 'boom "x"', n: 1 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ m: fc.constant('compact' as const) }) },
);

const commandArb: fc.Arbitrary<Command> = fc
  .tuple(callArb, fc.constantFrom(0, 0, 1, 1_000, 20_000, 61_000), fc.constantFrom('fresh' as const, 'fresh' as const, 'long' as const))
  .map(([call, step, via]) => ({ ...call, step, via }));

type Answer = { ok: true; value: unknown } | { ok: false; error: string };

/** Plain JSON data: `undefined` and missing keys compare equal, prototype-free maps look like any object. */
const plain = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

/**
 * Dead letter ids are random (fixed when the op is made), so each store's ids are named by the
 * order they were handed out in.
 */
class DeadLetterIds {
  private readonly names = new Map<string, string>();
  learn(id: string): string {
    if (!this.names.has(id)) this.names.set(id, `dead#${this.names.size}`);
    return this.names.get(id) as string;
  }
  name(id: string): string {
    return this.names.get(id) ?? `unknown:${id}`;
  }
}

const concrete = (n: AttemptNumber): number => {
  if (typeof n === 'string') throw new Error(`unresolved attempt number ${n}`);
  return n;
};

/** Make `call` on `store` at time `now`, every time-dependent argument from `now`. */
async function make(store: Store, call: Call, now: number, ids: DeadLetterIds): Promise<Answer> {
  const at = new Date(now);
  const rel = (ms: number | undefined) => (ms === undefined ? undefined : iso(now + ms));
  const run = async (): Promise<unknown> => {
    switch (call.m) {
      case 'insertEvent': {
        const [kind, id] = call.resource === undefined ? [undefined, undefined] : (RESOURCES[call.resource] as [ResourceKind, string]);
        const body = call.body === 'sample' ? sampleBody(call.id) : call.body === 'short' ? SHORT_BODY : undefined;
        return store.insertEvent(
          {
            id: call.id,
            type: call.type,
            environment: call.environment,
            createdAt: '2029-12-31T23:59:00.000Z',
            receivedAt: iso(now + call.receivedOffset),
            resourceKind: kind,
            resourceId: id,
            body,
          },
          at,
        );
      }
      case 'insertDeadLetter': {
        const letter = await store.insertDeadLetter({ receivedAt: iso(now), reason: call.reason, body: call.body, headers: { ...call.headers } }, at);
        return { ...letter, id: ids.learn(letter.id) };
      }
      case 'enqueueRun':
        return store.enqueueRun({ key: call.key, kind: call.kind, data: structuredClone(call.data), nextAttemptAt: rel(call.dueOffset) }, at);
      case 'claimRun':
        return store.claimRun(call.key, { owner: call.owner, leaseMs: call.leaseMs, now: at });
      case 'renewLease':
        return store.renewLease(call.key, call.owner, call.leaseMs, at);
      case 'completeRun':
        return store.completeRun(call.key, call.owner, at);
      case 'failRun':
        return store.failRun(call.key, call.owner, { error: call.error, now: at, retryAt: rel(call.retryOffset) });
      case 'retryRun':
        return store.retryRun(call.key, at);
      case 'updateResource':
        return store.updateResource({ ...structuredClone(call.update), ...(call.expiresOffset === undefined ? {} : { expiresAt: rel(call.expiresOffset) }) }, at);
      case 'putCheckoutAttempt':
        return store.putCheckoutAttempt(
          {
            orderId: call.orderId,
            kind: call.kind,
            idempotencyKey: call.idempotencyKey,
            requestHash: call.requestHash,
            ...(call.number === undefined ? {} : { number: concrete(call.number) }),
          },
          at,
        );
      case 'completeCheckoutAttempt':
        return store.completeCheckoutAttempt(call.orderId, { resourceId: call.resourceId, checkoutUrl: call.checkoutUrl }, at);
      case 'releaseCheckoutAttempt':
        return store.releaseCheckoutAttempt(call.orderId, concrete(call.number), at);
      case 'acquireLock':
        return store.acquireLock(call.name, call.owner, call.ttlMs, at);
      case 'releaseLock':
        return store.releaseLock(call.name, call.owner, at);
      case 'prune':
        return store.prune({ now: at, payloadsBefore: rel(call.payloadsOffset), eventsBefore: rel(call.eventsOffset) });
      case 'appendActivity':
        return store.appendActivity({ subject: call.subject, kind: call.kind, data: structuredClone(call.data) }, at);
      case 'compact':
        return store instanceof EmbeddedStore ? store.compact() : undefined;
    }
  };
  try {
    return { ok: true, value: plain(await run()) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

const byKey = <T>(items: T[], key: (item: T) => string): T[] => [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

/** Everything the read methods say at time `now`, as plain data. */
async function readBack(store: Store, now: number, ids: DeadLetterIds) {
  const runs: Record<string, unknown> = {};
  for (const key of RUN_KEYS) runs[key] = await store.getRun(key);
  const events: Record<string, unknown> = {};
  for (const id of EVENT_IDS) events[id] = await store.getEvent(id);
  const resources: Record<string, unknown> = {};
  for (const [kind, id] of RESOURCES) resources[`${kind}:${id}`] = await store.getResource(kind, id);
  const attempts: Record<string, unknown> = {};
  for (const order of ORDERS) attempts[order] = await store.getCheckoutAttempt(order);

  const runKeyOf = (run: Run) => run.key;
  const listRuns = {
    all: byKey(await store.listRuns(), runKeyOf),
    pending: byKey(await store.listRuns({ status: 'pending' }), runKeyOf),
    running: byKey(await store.listRuns({ status: 'running' }), runKeyOf),
    finished: byKey(await store.listRuns({ status: ['done', 'failed'] }), runKeyOf),
    events: byKey(await store.listRuns({ kind: 'event' }), runKeyOf),
    dueNow: byKey(await store.listRuns({ dueBy: iso(now) }), runKeyOf),
    dueSoon: byKey(await store.listRuns({ dueBy: iso(now + 30_000), kind: 'fulfillment' }), runKeyOf),
  };
  const countRuns = {
    all: await store.countRuns(),
    finished: await store.countRuns({ status: ['done', 'failed'] }),
    events: await store.countRuns({ kind: 'event' }),
    dueNow: await store.countRuns({ dueBy: iso(now) }),
  };
  const resourceKey = (record: { kind: string; id: string }) => `${record.kind}:${record.id}`;
  const listResources = {
    all: byKey(await store.listResources(), resourceKey),
    open: byKey(await store.listResources({ open: true }), resourceKey),
    closed: byKey(await store.listResources({ open: false }), resourceKey),
    invoices: byKey(await store.listResources({ kind: 'invoice' }), resourceKey),
    quiet: byKey(await store.listResources({ lastNewsBefore: iso(now - 1_000) }), resourceKey),
  };
  // listEvents promises newest first; events with the same receivedAt may come in either order.
  const listEvents = {
    all: await store.listEvents(),
    pending: await store.listEvents({ status: 'pending' }),
    running: await store.listEvents({ status: 'running' }),
    done: await store.listEvents({ status: 'done' }),
    failed: await store.listEvents({ status: 'failed' }),
    recent: await store.listEvents({ since: iso(now - 20_000) }),
    invoices: await store.listEvents({ type: 'invoice.paid' }),
    aboutR1: await store.listEvents({ resourceId: 'r1' }),
  };
  for (const [filter, list] of Object.entries(listEvents)) {
    const times = list.map((event) => event.receivedAt);
    expect(times, `listEvents ${filter} is newest first`).toEqual([...times].sort().reverse());
  }
  const tieFree = (list: Array<{ id: string; receivedAt: string }>) => byKey(list, (event) => `${event.receivedAt} ${event.id}`);
  const named = (letters: Array<{ id: string }>) => letters.map((letter) => ({ ...letter, id: ids.name(letter.id) }));
  return plain({
    runs,
    events,
    resources,
    attempts,
    listRuns,
    countRuns,
    listResources,
    listEvents: Object.fromEntries(Object.entries(listEvents).map(([filter, list]) => [filter, tieFree(list)])),
    deadLetters: named(await store.listDeadLetters()),
    lastDeadLetter: named(await store.listDeadLetters(1)),
    secondDeadLetter: named(await store.listDeadLetters(1, 1)),
    pages: {
      events: await store.listEvents({ limit: 1, offset: 1 }),
      runs: await store.listRuns({ limit: 2, offset: 1, newestFirst: true }),
      resources: await store.listResources({ limit: 1, offset: 1, newestFirst: true }),
      learnedByReconcile: byKey(await store.listResources({ outcomeSource: 'reconcile' }), resourceKey),
    },
    activity: { r1: await store.listActivity({ subject: 'payment:r1' }), reconcile: await store.listActivity({ subject: 'reconcile', limit: 2, offset: 1 }) },
    summary: await store.summarize({ now: new Date(now) }),
  });
}

/** Which effects an answer (the model's, equal to the embedded store's by then) shows. */
function effects(call: Call, answer: Answer, locks: Map<string, string>): string[] {
  const value = answer.ok ? (answer.value as Record<string, unknown> | boolean | undefined) : undefined;
  const record = (value ?? {}) as Record<string, unknown>;
  switch (call.m) {
    case 'insertEvent':
      return [record.inserted ? 'insertEvent:inserted' : 'insertEvent:duplicate'];
    case 'insertDeadLetter':
      return ['insertDeadLetter'];
    case 'enqueueRun':
      return record.inserted ? ['enqueueRun:inserted'] : [];
    case 'claimRun':
      return value ? ['claimRun:claimed', ...((record as unknown as Run).attempts > 1 ? ['claimRun:reclaimed'] : [])] : [];
    case 'renewLease':
      return value === true ? ['renewLease:renewed'] : [];
    case 'completeRun':
      return value === true ? ['completeRun:completed'] : [];
    case 'failRun':
      return value === true ? [call.retryOffset === undefined ? 'failRun:gaveUp' : 'failRun:retryAt'] : [];
    case 'retryRun':
      return value === true ? ['retryRun:retried'] : [];
    case 'updateResource': {
      const out = record.advanced ? ['updateResource:advanced'] : [];
      if (record.advanced && (record.record as { late?: boolean }).late === true) out.push('updateResource:late');
      return out;
    }
    case 'putCheckoutAttempt': {
      if (!record.inserted) return [];
      return (record.attempt as { number: number }).number > 1 ? ['putCheckoutAttempt:inserted', 'putCheckoutAttempt:next-number'] : ['putCheckoutAttempt:inserted'];
    }
    case 'completeCheckoutAttempt':
      return [answer.ok ? 'completeCheckoutAttempt:completed' : 'completeCheckoutAttempt:missing'];
    case 'releaseCheckoutAttempt':
      return value === true ? ['releaseCheckoutAttempt:released'] : [];
    case 'acquireLock':
      if (value === true) locks.set(call.name, call.owner);
      return [value === true ? 'acquireLock:acquired' : 'acquireLock:refused'];
    case 'releaseLock':
      // The store has no lock read-back: `locks` mirrors who holds each lock (only `acquireLock` sets it).
      if (locks.get(call.name) !== call.owner) return [];
      locks.delete(call.name);
      return ['releaseLock:released'];
    case 'prune': {
      const out: string[] = [];
      if ((record.payloadsPruned as number) > 0) out.push('prune:payloads');
      if ((record.eventsForgotten as number) > 0) out.push('prune:forgotten');
      return out;
    }
    case 'appendActivity':
      return ['appendActivity'];
    case 'compact':
      return ['compact'];
  }
}

/** Resolve the symbolic arguments of `call` from the model's state (see `Owner`). */
async function resolve(call: Call, model: Store, now: number): Promise<Call> {
  const resolved = { ...call } as Call & { key?: string; owner?: string; number?: AttemptNumber };
  if (resolved.key?.startsWith('@')) {
    const filter = resolved.key === '@due' ? { dueBy: iso(now) } : { status: resolved.key.slice(1) as Run['status'] };
    resolved.key = byKey(await model.listRuns(filter), (run) => run.key)[0]?.key ?? 'job:a';
  }
  if (resolved.owner === 'holder') resolved.owner = (resolved.key === undefined ? undefined : (await model.getRun(resolved.key))?.owner) ?? 'w1';
  if (typeof resolved.number === 'string' && 'orderId' in call) {
    const current = (await model.getCheckoutAttempt(call.orderId))?.number ?? 1;
    resolved.number = resolved.number === '@next' ? current + 1 : current;
  }
  return resolved;
}

const seen = new Set<string>();
const called = new Set<string>();

async function check(commands: Command[], compactMinBytes: number | undefined): Promise<void> {
  const dir = await tempDir('checkout-kit-model-');
  const openEmbedded = async () => {
    const store = new EmbeddedStore({ dir, logger: silentLogger, lockStaleMs: 2000, compactMinBytes, compactLullMs: 0 });
    await store.open();
    return store;
  };
  const model = new MemoryStore();
  await model.open();
  const modelIds = new DeadLetterIds();
  const embeddedIds = new DeadLetterIds();
  const locks = new Map<string, string>();
  let long: EmbeddedStore | undefined;
  let fresh: EmbeddedStore | undefined;
  try {
    // Opened before the sequence: it must catch up on every call below, by journal or snapshot.
    long = await openEmbedded();
    fresh = await openEmbedded();
    let now = T0;
    for (const [i, command] of commands.entries()) {
      now += command.step;
      const { step: _step, via, ...symbolic } = command;
      const call = await resolve(symbolic, model, now);
      const expected = await make(model, call, now, modelIds);
      const actual = await make(via === 'long' ? long : fresh, call, now, embeddedIds);
      expect(actual, `answer to call #${i} (${call.m} via ${via})`).toEqual(expected);
      called.add(call.m);
      for (const effect of effects(call, expected, locks)) seen.add(effect);

      await fresh.close();
      fresh = undefined;
      fresh = await openEmbedded().catch((error: unknown) => {
        throw new Error(`Reopening the store after call #${i} (${call.m}) failed: ${(error as Error).message}`, { cause: error });
      });
      const want = await readBack(model, now, modelIds);
      expect(await readBack(fresh, now, embeddedIds), `a reopened store after call #${i} (${call.m})`).toEqual(want);
      expect(await readBack(long, now, embeddedIds), `the instance opened before the sequence, after call #${i} (${call.m})`).toEqual(want);
    }
  } finally {
    await fresh?.close().catch(() => undefined);
    await long?.close().catch(() => undefined);
    await model.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const c = (call: Call, step = 0, via: Command['via'] = 'fresh'): Command => ({ ...call, step, via });

/**
 * A fixed sequence that makes every effect happen (renew included), so that the property covers
 * each op type's journal line whatever the random runs draw.
 */
const EVERY_EFFECT: Command[] = [
  c({ m: 'insertEvent', id: 'e1', type: 'payment.paid', receivedOffset: 0, body: 'sample', environment: 'test', resource: 0 }),
  c({ m: 'insertEvent', id: 'e1', type: 'payment.paid', receivedOffset: 0, body: 'short', environment: 'test', resource: 0 }, 1),
  c({ m: 'insertDeadLetter', reason: 'bad JSON', body: '{"x":', headers: { 'webhook-id': 'msg_1' } }, 1, 'long'),
  c({ m: 'enqueueRun', key: 'job:a', kind: 'fulfillment', data: { resource: 'payment:r1' }, dueOffset: undefined }, 1),
  c({ m: 'claimRun', key: 'job:a', owner: 'w1', leaseMs: 30_000 }),
  c({ m: 'renewLease', key: 'job:a', owner: 'w1', leaseMs: 30_000 }, 1_000),
  c({ m: 'renewLease', key: 'job:a', owner: 'w1', leaseMs: 1_000 }, 1_000, 'long'),
  c({ m: 'claimRun', key: 'job:a', owner: 'w2', leaseMs: 30_000 }, 1_000),
  c({ m: 'completeRun', key: 'job:a', owner: 'w2' }, 1),
  c({ m: 'claimRun', key: 'event:e1', owner: 'w1', leaseMs: 30_000 }),
  c({ m: 'failRun', key: 'event:e1', owner: 'w1', error: 'boom', retryOffset: 1_000 }),
  c({ m: 'claimRun', key: 'event:e1', owner: 'w2', leaseMs: 30_000 }, 1_000, 'long'),
  c({ m: 'failRun', key: 'event:e1', owner: 'w2', error: 'gave up', retryOffset: undefined }),
  c({ m: 'retryRun', key: 'event:e1' }, 1),
  c({ m: 'claimRun', key: 'event:e1', owner: 'w1', leaseMs: 30_000 }),
  c({ m: 'completeRun', key: 'event:e1', owner: 'w1' }, 0, 'long'),
  c({ m: 'updateResource', update: { kind: 'payment', id: 'r1', outcome: 'paid', source: 'webhook', late: true, snapshot: { amount: '1.00' }, orderId: 'o1' }, expiresOffset: -1_000 }),
  c({ m: 'putCheckoutAttempt', orderId: 'o1', kind: 'payment', idempotencyKey: 'k1', requestHash: 'h1', number: undefined }),
  c({ m: 'completeCheckoutAttempt', orderId: 'o2', resourceId: 'r1', checkoutUrl: undefined }),
  c({ m: 'releaseCheckoutAttempt', orderId: 'o1', number: 1 }, 1),
  c({ m: 'putCheckoutAttempt', orderId: 'o1', kind: 'payment', idempotencyKey: 'k2', requestHash: 'h1', number: 2 }, 1, 'long'),
  c({ m: 'completeCheckoutAttempt', orderId: 'o1', resourceId: 'r1', checkoutUrl: 'https://pay.example/c/1' }),
  c({ m: 'acquireLock', name: 'reconcile', owner: 'w1', ttlMs: 60_000 }),
  c({ m: 'acquireLock', name: 'reconcile', owner: 'w2', ttlMs: 60_000 }, 1, 'long'),
  c({ m: 'releaseLock', name: 'reconcile', owner: 'w1' }),
  c({ m: 'compact' }),
  c({ m: 'insertEvent', id: 'e2', type: 'invoice.paid', receivedOffset: 0, body: 'short', environment: undefined, resource: 1 }, 1_000, 'long'),
  c({ m: 'claimRun', key: 'event:e2', owner: 'w2', leaseMs: 1_000 }),
  c({ m: 'completeRun', key: 'event:e2', owner: 'w2' }),
  c({ m: 'appendActivity', subject: 'payment:r1', kind: 'news', data: { outcome: 'paid' } }),
  c({ m: 'appendActivity', subject: 'reconcile', kind: 'reconcile', data: {} }, 1, 'long'),
  c({ m: 'prune', payloadsOffset: 1, eventsOffset: undefined }, 1_000),
  c({ m: 'prune', payloadsOffset: undefined, eventsOffset: -500 }, 1, 'long'),
  c({ m: 'compact' }, 0, 'long'),
];

describe('EmbeddedStore against the MemoryStore model', () => {
  it('knows every write method of the stores', () => {
    expect(untested).toBe(true);
    const methods = Object.getOwnPropertyNames(StateStore.prototype).filter((name) => !['constructor', 'refresh', 'withBodies'].includes(name));
    expect(methods.filter((name) => !(READ_METHODS as readonly string[]).includes(name)).sort()).toEqual(WRITE_METHODS.filter((name) => name !== 'compact').sort());
    expect(typeof EmbeddedStore.prototype.compact).toBe('function');
  });

  it(
    'answers every call and every read like the memory store, across reopen after each call and a long-lived second instance',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 30, size: 'max' }), fc.constantFrom(undefined, 0, 4096), (commands, compactMinBytes) =>
          check(commands, compactMinBytes),
        ),
        { numRuns: 50, examples: [[EVERY_EFFECT, undefined]] },
      );
      // The coverage must not shrink silently: every write method was called, and each changed the state at least once.
      expect([...called].sort()).toEqual([...WRITE_METHODS].sort());
      expect([...seen].sort()).toEqual([...REQUIRED_EFFECTS].sort());
    },
    120_000,
  );
});
