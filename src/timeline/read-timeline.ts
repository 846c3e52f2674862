import { resourceRuns } from '../runs/index.js';
import type { ResourceKind, Run, Store, StoredEvent } from '../store/index.js';
import { HANDLER_KIND, HandlerDataSchema, NEWS_KIND, NewsDataSchema, resourceSubject } from './activity-data.js';

/** One line of a resource's timeline. Texts come from stored data: whoever renders them escapes them. */
export interface TimelineEntry {
  at: string;
  /** `event`: a webhook stored; `news`: the engine confirmed and classified; `handler`: a handler call; `run`: a handler run queued or settled. */
  kind: 'event' | 'news' | 'handler' | 'run' | 'other';
  title: string;
  detail: string | undefined;
  tone: 'ok' | 'info' | 'warn' | 'error';
  eventId?: string | undefined;
  runKey?: string | undefined;
}

/** A resource's timeline for the console: its entries, newest first. */
export interface Timeline {
  entries: TimelineEntry[];
  events: Array<StoredEvent & { run: Run | undefined }>;
  runs: Run[];
}

/** How many of each source a timeline shows (the newest). */
const LIMIT = 200;

function eventEntry(event: StoredEvent & { run: Run | undefined }): TimelineEntry {
  const run = event.run;
  const failed = run?.status === 'failed';
  const status = run ? `dispatch ${run.status}${run.attempts > 1 ? ` after ${run.attempts} attempts` : ''}` : 'no dispatch run';
  return {
    at: event.receivedAt,
    kind: 'event',
    title: `${event.type} received`,
    detail: run?.lastError ? `${status}: ${run.lastError}` : status,
    tone: failed ? 'error' : run?.lastError ? 'warn' : 'info',
    eventId: event.id,
  };
}

function activityEntry(entry: { at: string; kind: string; data: Record<string, unknown> }): TimelineEntry {
  if (entry.kind === NEWS_KIND) {
    const news = NewsDataSchema.safeParse(entry.data);
    if (news.success) {
      const data = news.data;
      if (!data.ok) {
        const title = data.ignored ? `news by ${data.source} ignored: it speaks for another merchant` : `news by ${data.source}: the service could not be read`;
        return { at: entry.at, kind: 'news', title, detail: data.error, tone: 'warn' };
      }
      const amounts = data.amount === undefined ? undefined : `received ${data.amountReceived ?? '?'} of ${data.amount}${data.late ? ', late' : ''}`;
      return {
        at: entry.at,
        kind: 'news',
        title: data.advanced ? `outcome → ${data.outcome} (learned by ${data.source})` : `confirmed by ${data.source}: ${data.outcome}`,
        detail: amounts,
        tone: data.advanced ? 'ok' : 'info',
      };
    }
  }
  if (entry.kind === HANDLER_KIND) {
    const call = HandlerDataSchema.safeParse(entry.data);
    if (call.success) {
      const data = call.data;
      const verb = data.result === 'completed' ? 'completed' : data.result === 'retrying' ? 'threw (will retry)' : 'failed for good';
      return {
        at: entry.at,
        kind: 'handler',
        title: `${data.outcome} handler ${verb} (attempt ${data.attempt}, ${data.durationMs} ms)`,
        detail: data.error,
        tone: data.result === 'completed' ? 'ok' : data.result === 'retrying' ? 'warn' : 'error',
        runKey: data.key,
      };
    }
  }
  return { at: entry.at, kind: 'other', title: entry.kind, detail: JSON.stringify(entry.data), tone: 'info' };
}

function runEntries(run: Run): TimelineEntry[] {
  const outcome = run.key.split(':').at(-1) ?? '';
  const source = typeof run.data.source === 'string' ? ` by ${run.data.source}` : '';
  const entries: TimelineEntry[] = [
    { at: run.createdAt, kind: 'run', title: `${outcome} handler queued${source}`, detail: undefined, tone: 'info', runKey: run.key },
  ];
  if (run.status === 'done' && run.completedAt)
    entries.push({ at: run.completedAt, kind: 'run', title: `${outcome} run done`, detail: `after ${run.attempts} attempt(s)`, tone: 'ok', runKey: run.key });
  if (run.status === 'failed')
    entries.push({ at: run.updatedAt, kind: 'run', title: `${outcome} run failed for good`, detail: run.lastError, tone: 'error', runKey: run.key });
  return entries;
}

/**
 * A resource's timeline, oldest first: each stored event with its dispatch, each piece of news the
 * engine processed (webhook, return, reconcile poll) and what it decided, each handler call with
 * its error, and its runs. Reads are bounded (the newest 200 of each), whatever the store holds.
 */
export async function readTimeline(store: Store, kind: ResourceKind, id: string): Promise<Timeline> {
  const events = await store.listEvents({ resourceId: id, limit: LIMIT });
  const activity = await store.listActivity({ subject: resourceSubject(kind, id), limit: LIMIT });
  const runs = await resourceRuns(store, kind, id);
  // Both lists come newest first: reversed, so that entries of one instant stay in the order they happened.
  const entries = [
    ...[...events]
      .reverse()
      .filter((event) => event.resourceKind === undefined || event.resourceKind === kind)
      .map(eventEntry),
    ...[...activity].reverse().map(activityEntry),
    ...runs.flatMap(runEntries),
  ];
  // Stable: entries of one instant keep the order above (event, then news, then handler).
  entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return { entries, events, runs };
}
