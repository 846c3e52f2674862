import { parseRunKey } from '../../domain/index.js';
import { StoreError } from '../../errors/index.js';
import type { NewRun, Run } from '../types.js';

/**
 * `enqueueRun`'s rule for event dispatch runs (see `RunQueue.enqueueRun`): undefined for any other
 * run, which the store enqueues; the stored run when an event's is asked for again; else it throws.
 */
export async function enqueuedWithEvent(run: NewRun, getRun: (key: string) => Promise<Run | undefined>): Promise<{ inserted: false; run: Run } | undefined> {
  const eventKey = parseRunKey(run.key)?.kind === 'event';
  if (!eventKey && run.kind !== 'event') return undefined;
  const existing = eventKey && run.kind === 'event' ? await getRun(run.key) : undefined;
  if (existing) return { inserted: false, run: existing };
  throw new StoreError(`Cannot enqueue run ${run.key} (${run.kind}): dispatch runs are keyed event:<id> and queued by insertEvent with their event.`);
}
