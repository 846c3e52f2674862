/**
 * The figures of a storm, from what each side recorded on its own: the sandbox (events sent,
 * delivery attempts and their answers, final payments), the store (events, runs) and the
 * fulfillment module's log (handler starts and ends, with the process that ran them), plus the
 * test's own record of which process it killed when.
 */
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { amountIsZero, compareAmounts } from '../../../src/money/index.js';
import type { DeliveryRecord, SandboxEvent } from '../../../src/sandbox/index.js';
import type { Run, StoredEvent } from '../../../src/store/index.js';
import { reportFigures } from './report.js';
import type { HandlerLine } from './storm-fulfillment.js';
import type { StormOutcome } from './storm-run.js';
import type { SandboxPayment } from './storm-sandbox.js';

export function readHandlerLog(file: string): HandlerLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as HandlerLine];
      } catch {
        return []; // a line cut short by a SIGKILL mid-append
      }
    });
}

export interface Kill {
  pid: number;
  at: number;
}

/** Starts that have no end from the same process and attempt. */
export function openStarts(lines: HandlerLine[]): HandlerLine[] {
  const ended = new Set(lines.filter((l) => l.step === 'end').map((l) => `${l.pid}|${l.key}|${l.attempt}`));
  return lines.filter((l) => l.step === 'start' && !ended.has(`${l.pid}|${l.key}|${l.attempt}`));
}

export interface StormInputs {
  sandboxEvents: SandboxEvent[];
  deliveries: DeliveryRecord[];
  stored: Array<StoredEvent & { run?: Run | undefined }>;
  runs: Run[];
  lines: HandlerLine[];
  kills: Kill[];
  payments: SandboxPayment[];
}

export interface StormFigures {
  figures: Record<string, number>;
  /** Examples behind each non-zero failure figure, for the assertion messages. */
  examples: Record<string, unknown[]>;
}

const fulfilmentKey = (id: string, outcome: string) => `payment:${id}:${outcome}`;

export function stormFigures(input: StormInputs): StormFigures {
  const examples: Record<string, unknown[]> = {};
  const note = (name: string, items: unknown[]) => {
    if (items.length > 0) examples[name] = items.slice(0, 10);
    return items.length;
  };

  // Webhooks: what the sandbox saw acknowledged must be in the store, once, byte for byte.
  const acked = new Set(input.deliveries.filter((d) => d.delivered).map((d) => d.eventId));
  const storedIds = input.stored.map((event) => event.id);
  const storedSet = new Set(storedIds);
  const sandboxEvent = new Map(input.sandboxEvents.map((event) => [event.id, event]));
  const ackedMissing = note(
    'ackedMissing',
    [...acked].filter((id) => !storedSet.has(id)),
  );
  const storedTwice = note(
    'storedTwice',
    storedIds.filter((id, i) => storedIds.indexOf(id) !== i),
  );
  const bodiesDiffering = note(
    'bodiesDiffering',
    input.stored.filter((event) => sandboxEvent.has(event.id) && event.body !== JSON.stringify(sandboxEvent.get(event.id))).map((event) => event.id),
  );
  const unknownStored = note(
    'unknownStored',
    storedIds.filter((id) => !sandboxEvent.has(id)),
  );
  const eventRuns = input.runs.filter((run) => run.kind === 'event');
  const eventRunsNotDone = note(
    'eventRunsNotDone',
    eventRuns.filter((run) => run.status !== 'done').map((run) => ({ key: run.key, status: run.status })),
  );
  const storedWithoutRun = note(
    'storedWithoutRun',
    storedIds.filter((id) => !eventRuns.some((run) => run.key === `event:${id}`)),
  );

  // Delivery statistics (what the network did).
  const jobs = new Map<string, DeliveryRecord>();
  for (const d of input.deliveries) {
    const job = `${d.eventId}|${d.url}|${d.duplicated}`;
    const before = jobs.get(job);
    if (!before || d.attempt > before.attempt) jobs.set(job, d);
  }
  const gaveUp = [...jobs.values()].filter((d) => !d.dropped && !d.delivered && d.nextAttemptAt === null).length;

  // Handlers.
  const starts = input.lines.filter((l) => l.step === 'start');
  const ends = input.lines.filter((l) => l.step === 'end');
  const endsByKey = new Map<string, HandlerLine[]>();
  for (const end of ends) endsByKey.set(end.key, [...(endsByKey.get(end.key) ?? []), end]);
  const killOf = new Map(input.kills.map((kill) => [kill.pid, kill]));
  const killedAfter = (line: HandlerLine) => {
    const kill = killOf.get(line.pid);
    return kill !== undefined && kill.at >= line.at;
  };

  // A start without an end must be a handler whose process was killed while it ran.
  const unfinished = openStarts(input.lines);
  const extraStartsUnexplained = note(
    'extraStartsUnexplained',
    unfinished.filter((line) => !killedAfter(line)),
  );
  // A kill "inside a handler": the killed process had a start without an end.
  const killsInsideHandler = input.kills.filter((kill) => unfinished.some((line) => line.pid === kill.pid && line.at <= kill.at)).length;
  const killsInsideSlowHandler = input.kills.filter((kill) =>
    unfinished.some((line) => line.pid === kill.pid && line.at <= kill.at && line.ms >= 10_000),
  ).length;

  // Completions: one per payment and outcome. The one documented exception (README "Once-only
  // fulfillment"): the process died between the handler's return and storing its completion. Then
  // the extra end comes from a process killed within moments (2 s) of it, and the attempt that
  // completed the run started only after that kill (its claim waited for the dead process's lease).
  let beyondOne = 0;
  const afterKill: unknown[] = [];
  const unexplained: unknown[] = [];
  for (const [key, list] of endsByKey) {
    if (list.length < 2) continue;
    beyondOne += list.length - 1;
    const last = list.reduce((a, b) => (b.attempt > a.attempt ? b : a));
    const lastStart = starts.find((start) => start.key === key && start.pid === last.pid && start.attempt === last.attempt);
    for (const end of list) {
      if (end === last) continue;
      const kill = killOf.get(end.pid);
      const diedBeforeStoring =
        kill !== undefined &&
        kill.at >= end.at &&
        kill.at - end.at < 2_000 &&
        end.attempt < last.attempt &&
        lastStart !== undefined &&
        lastStart.at >= kill.at - 1_000;
      if (diedBeforeStoring) afterKill.push({ key, pid: end.pid, attempt: end.attempt, killedMsAfterReturn: kill.at - end.at });
      else unexplained.push({ key, ends: list.map((e) => ({ pid: e.pid, attempt: e.attempt, at: e.at, killedAt: killOf.get(e.pid)?.at })) });
    }
  }
  if (afterKill.length > 0) examples.completionsRepeatedAfterKillBeforeStore = afterKill.slice(0, 10);

  // Outcomes, from the sandbox's final state of each payment.
  const paidWithoutHandler: string[] = [];
  const closedWithoutHandler: string[] = [];
  const paidAndOverpaid: string[] = [];
  const unexpectedHandlers: string[] = [];
  let settled = 0;
  let closed = 0;
  let open = 0;
  const endedKeys = new Set(ends.map((end) => end.key));
  for (const payment of input.payments) {
    const done = (outcome: string) => endedKeys.has(fulfilmentKey(payment.id, outcome));
    const full = compareAmounts(payment.amountReceived, payment.amount) >= 0;
    const expired = payment.status === 'EXPIRED' || payment.expiryNotified;
    if (full) {
      settled += 1;
      if (!done('paid') && !done('overpaid')) paidWithoutHandler.push(payment.id);
      if (done('paid') && done('overpaid')) paidAndOverpaid.push(payment.id);
      if (!expired && (done('expired') || done('underpaid')))
        unexpectedHandlers.push(`${payment.id}: expired/underpaid handler for a payment that never expired`);
    } else if (expired) {
      closed += 1;
      const outcome = amountIsZero(payment.amountReceived) ? 'expired' : 'underpaid';
      if (!done(outcome)) closedWithoutHandler.push(`${payment.id} (${outcome})`);
      for (const other of ['paid', 'overpaid', outcome === 'expired' ? 'underpaid' : 'expired'])
        if (done(other)) unexpectedHandlers.push(`${payment.id}: ${other} handler, final state ${payment.status} ${payment.amountReceived}/${payment.amount}`);
    } else {
      open += 1;
      for (const outcome of ['paid', 'overpaid', 'underpaid', 'expired'])
        if (done(outcome)) unexpectedHandlers.push(`${payment.id}: ${outcome} handler for a payment still pending`);
    }
  }
  const fulfilmentRuns = input.runs.filter((run) => run.kind === 'fulfillment');

  const figures = {
    sandboxEvents: input.sandboxEvents.length,
    deliveryRecords: input.deliveries.length,
    acked: acked.size,
    dropped: input.deliveries.filter((d) => d.dropped).length,
    duplicated: input.deliveries.filter((d) => d.duplicated && d.attempt === 1).length,
    gaveUp,
    storedEvents: input.stored.length,
    ackedMissing,
    storedTwice,
    bodiesDiffering,
    unknownStored,
    storedWithoutRun,
    eventRunsNotDone,
    payments: input.payments.length,
    settled,
    closed,
    open,
    paidWithoutHandler: note('paidWithoutHandler', paidWithoutHandler),
    closedWithoutHandler: note('closedWithoutHandler', closedWithoutHandler),
    unexpectedHandlers: note('unexpectedHandlers', unexpectedHandlers),
    handlerStarts: starts.length,
    handlerEnds: ends.length,
    slowHandlers: new Set(starts.filter((s) => s.ms >= 10_000).map((s) => s.key)).size,
    completionsBeyondOne: beyondOne + paidAndOverpaid.length,
    completionsBeyondOneUnexplained: note('completionsBeyondOneUnexplained', [...unexplained, ...paidAndOverpaid.map((id) => `${id}: paid and overpaid`)]),
    completionsRepeatedAfterKillBeforeStore: afterKill.length,
    extraStarts: unfinished.length,
    extraStartsUnexplained,
    kills: input.kills.length,
    killsInsideHandler,
    killsInsideSlowHandler,
    fulfilmentRunsNotDone: note(
      'fulfilmentRunsNotDone',
      fulfilmentRuns.filter((run) => run.status !== 'done').map((run) => ({ key: run.key, status: run.status, owner: run.owner, leaseUntil: run.leaseUntil })),
    ),
  };
  return { figures, examples };
}

/**
 * Report a storm's figures and assert what every storm must show: it happened as planned (every
 * payment created, at least `kills` kills with one inside a handler, deliveries idle, both final
 * reconciles exit 0) and every failure figure the issue names is 0.
 */
export function expectStormHeld(scenario: string, outcome: StormOutcome, kills: number): void {
  const { figures, info, examples } = outcome;
  reportFigures(scenario, { ...info, ...figures });
  if (Object.keys(examples).length > 0) console.log('  [storm] examples:', JSON.stringify(examples, null, 1).slice(0, 6000));
  if (outcome.serveErrors.length > 0) console.log('  [storm] serve errors:', outcome.serveErrors.slice(0, 20).join('\n'));

  // The storm happened as planned.
  expect(outcome.workload.notCreated).toEqual([]);
  expect(outcome.workload.stepErrors).toEqual([]);
  expect(figures.kills).toBeGreaterThanOrEqual(kills);
  expect(figures.killsInsideHandler, 'no kill landed inside a handler').toBeGreaterThan(0);
  expect(info.deliveriesIdle).toBe(true);
  expect(outcome.reconciles.map((r) => r.code)).toEqual([0, 0]);

  // What the issue asks: all 0.
  const failures = {
    ackedMissing: figures.ackedMissing,
    storedTwice: figures.storedTwice,
    bodiesDiffering: figures.bodiesDiffering,
    storedWithoutRun: figures.storedWithoutRun,
    eventRunsNotDone: figures.eventRunsNotDone,
    paidWithoutHandler: figures.paidWithoutHandler,
    closedWithoutHandler: figures.closedWithoutHandler,
    unexpectedHandlers: figures.unexpectedHandlers,
    completionsBeyondOneUnexplained: figures.completionsBeyondOneUnexplained,
    extraStartsUnexplained: figures.extraStartsUnexplained,
    fulfilmentRunsNotDone: figures.fulfilmentRunsNotDone,
  };
  expect(failures, JSON.stringify(examples)).toEqual(Object.fromEntries(Object.keys(failures).map((key) => [key, 0])));
}
