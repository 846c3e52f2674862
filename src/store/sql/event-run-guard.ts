import { parseRunKey } from '../../domain/index.js';
import { StoreError } from '../../errors/index.js';
import type { NewRun, Run } from '../types.js';

/**
 * The store's rule for `enqueueRun` of an event's dispatch run: that run is made with its event
 * (`insertEvent`, in the same write), never on its own. Resolves undefined for any other run (the
 * store enqueues it); the existing run when asked again for an event's stored dispatch run; and
 * throws for any other run of kind `event` or keyed `event:<id>`.
 */
export async function enqueuedWithEvent(run: NewRun, getRun: (key: string) => Promise<Run | undefined>): Promise<{ inserted: false; run: Run } | undefined> {
  const eventKey = parseRunKey(run.key)?.kind === 'event';
  if (!eventKey && run.kind !== 'event') return undefined;
  const existing = eventKey && run.kind === 'event' ? await getRun(run.key) : undefined;
  if (existing) return { inserted: false, run: existing };
  throw new StoreError(`Cannot enqueue run ${run.key} (${run.kind}): dispatch runs are keyed event:<id> and queued by insertEvent with their event.`);
}
