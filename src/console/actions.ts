import { z } from 'zod';
import { deliverSigned } from '../devtools/deliver-signed.js';
import { retryFailed } from '../runs/index.js';
import type { Run } from '../store/index.js';
import type { ActionOutcome, ConsoleContext } from './context.js';
import { parseInput } from './query.js';
import { ConsoleRequestError } from './request-error.js';

/** What the operator can do from the console. */
export type ActionName = 'retry' | 'retry-all' | 'replay' | 'reconcile';

/** An action with its input checked, ready to be confirmed and then performed. */
export interface PreparedAction {
  /** The confirmation page's sentence: what will happen. */
  summary: string;
  /** What the log names as its target. */
  target: string;
  /** Carried unchanged from the confirmation to the POST. */
  hidden: Record<string, string>;
  /** Shown for editing on the confirmation page (the replay's URL). */
  fields: Array<{ name: string; label: string; value: string }>;
  perform(): Promise<ActionOutcome>;
}

export interface ActionSpec {
  title: string;
  /** The confirming button's label. */
  button: string;
  /** Check the input (query on GET, form on POST, without the CSRF fields); throws `ConsoleRequestError`. */
  prepare(context: ConsoleContext, input: Record<string, unknown>): Promise<PreparedAction>;
}

/** Start due runs in the background after a retry (serve's engine), so the page does not wait for handlers. */
function kick(context: ConsoleContext): void {
  if (context.runDue) context.track(context.runDue());
}

/**
 * When a run put back in line runs, as this console can say it: handler runs start now where it
 * can start them (inside serve), else serve's run loop does within a second; event runs are dispatched by serve's
 * receiver, which polls its queue every second, and by nothing else (a standalone console cannot).
 */
function whenItRuns(context: ConsoleContext, kind: Run['kind'] | 'mixed'): string {
  const handlers = context.runDue ? 'runs again now' : 'runs within a second in serve, or at the next reconcile';
  const events = 'is dispatched again by serve, within a second while it runs';
  if (kind === 'fulfillment') return handlers;
  if (kind === 'event') return events;
  return `a handler run ${handlers}; an event run ${events}`;
}

const describeRun = (run: Run) =>
  run.status === 'done' ? `done (its handler completed${run.completedAt ? ` at ${run.completedAt}` : ''}; it never runs again)` : `${run.status}, not failed`;

const KeySchema = z.strictObject({ key: z.string({ error: 'key is required' }).min(1, 'key is required').max(600, 'key is too long') });
const ReplaySchema = z.strictObject({
  event: z.string({ error: 'event is required' }).min(1, 'event is required').max(600, 'event is too long'),
  url: z
    .string()
    .max(2000, 'url is too long')
    .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), 'url must be an http(s) URL such as http://127.0.0.1:3000/webhooks/checkout')
    .optional(),
});
const NothingSchema = z.strictObject({});

/** Every action: a `Record`, so the routes and the pages cannot miss one. */
export const ACTIONS: Record<ActionName, ActionSpec> = {
  retry: {
    title: 'Retry a failed run',
    button: 'Retry this run',
    async prepare(context, input) {
      const { key } = parseInput(KeySchema, input, 'field');
      const run = await context.store.getRun(key);
      if (!run) throw new ConsoleRequestError(404, 'not_found', `No run ${key} in the store: see the runs list.`);
      return {
        summary: `Put run ${key} (${run.status}, ${run.attempts} attempt(s), last error: ${run.lastError ?? 'none'}) back in line with its attempts started over: its ${run.kind === 'event' ? 'event is dispatched' : 'handler is called'} again, and retried with backoff while it fails, as a new run is. A run that is not failed is left alone.`,
        target: key,
        hidden: { key },
        fields: [],
        async perform() {
          if (!(await context.store.retryRun(key, context.clock()))) {
            const now = await context.store.getRun(key);
            return { ok: true, message: `Nothing to do: run ${key} is ${now ? describeRun(now) : 'gone'}.` };
          }
          kick(context);
          return { ok: true, message: `Run ${key} is back in line: it ${whenItRuns(context, run.kind)}.` };
        },
      };
    },
  },
  'retry-all': {
    title: 'Retry every failed run',
    button: 'Retry all failed runs',
    async prepare(context, input) {
      parseInput(NothingSchema, input, 'field');
      const { dispatch, fulfillment } = await context.store.summarize({ now: context.clock() });
      return {
        summary: `Put every run failed for good back in line: now ${fulfillment.failed} fulfillment handler run(s) and ${dispatch.failed} event dispatch run(s). Their attempts start over: each runs again, and is retried with backoff while it fails, as a new run is; fix the cause first, or they fail for good again.`,
        target: 'all failed runs',
        hidden: {},
        fields: [],
        async perform() {
          const retried = await retryFailed(context.store, { clock: context.clock, pageSize: 500 });
          if (retried > 0) kick(context);
          return {
            ok: true,
            message: retried === 0 ? 'Nothing to do: no run is failed.' : `${retried} run(s) are back in line: ${whenItRuns(context, 'mixed')}.`,
          };
        },
      };
    },
  },
  replay: {
    title: 'Replay an event to a URL',
    button: 'Send the event',
    async prepare(context, input) {
      const { event: id, url } = parseInput(ReplaySchema, input, 'field');
      const replay = context.replay;
      if (!replay || replay.secrets.length === 0)
        throw new ConsoleRequestError(409, 'action_unavailable', 'Replay needs the webhook secret to sign with: set CHECKOUT_WEBHOOK_SECRET.');
      const event = await context.store.getEvent(id);
      if (!event) throw new ConsoleRequestError(404, 'not_found', `No event ${id} in the store: see the events list.`);
      if (event.body === undefined)
        throw new ConsoleRequestError(409, 'payload_pruned', `Event ${id} has no body any more (pruned by retention): it cannot be replayed.`);
      const target = url ?? replay.defaultUrl ?? '';
      return {
        summary: `Send event ${id} (${event.type}), its body byte for byte and freshly signed, to the URL below. A receiver that already has it acknowledges it without running its handlers again.`,
        target: `${id} → ${target}`,
        hidden: { event: id },
        fields: [{ name: 'url', label: 'Receiver URL', value: target }],
        async perform() {
          if (!url) throw new ConsoleRequestError(400, 'invalid_request', 'url is required: give the receiver URL to send the event to.');
          const result = await deliverSigned({ url, secret: replay.secrets, scheme: replay.scheme }, { id, body: event.body as string });
          return result.ok
            ? { ok: true, message: `Event ${id} was sent to ${url}: it answered ${result.status}.` }
            : { ok: false, message: `Event ${id} was sent to ${url} but ${result.error ?? 'failed'}.` };
        },
      };
    },
  },
  reconcile: {
    title: 'Run a reconcile pass now',
    button: 'Reconcile now',
    async prepare(context, input) {
      parseInput(NothingSchema, input, 'field');
      const run = context.reconcile;
      if (!run) throw new ConsoleRequestError(409, 'action_unavailable', `Reconcile is not available here: ${context.reconcileUnavailable}.`);
      return {
        summary:
          'Poll every open payment and invoice whose last news is older than 10 minutes, fulfil what the webhooks missed, and re-run due handler runs. Only one pass runs at a time per store (a second one does nothing).',
        target: 'reconcile pass',
        hidden: {},
        fields: [],
        async perform() {
          const summary = await run();
          if (summary.skipped) return { ok: true, message: 'Nothing done: another reconcile pass is running on this store.' };
          return {
            ok: summary.failed === 0,
            message: `Reconcile pass done in ${summary.durationMs} ms: checked ${summary.checked}, fulfilled ${summary.fulfilled}, missed by webhooks ${summary.missedByWebhooks}, failed ${summary.failed}, awaiting retry ${summary.awaitingRetry}.`,
          };
        },
      };
    },
  },
};

export const isActionName = (name: string): name is ActionName => Object.hasOwn(ACTIONS, name);
