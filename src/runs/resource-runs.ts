import type { ResourceKind, Run, Store } from '../store/types.js';
import { HANDLER_OUTCOMES, runKeys } from '../domain/index.js';

/** The handler runs of one payment or invoice that exist, one per outcome, in `HANDLER_OUTCOMES` order. */
export async function resourceRuns(store: Pick<Store, 'getRun'>, kind: ResourceKind, id: string): Promise<Run[]> {
  const runs = await Promise.all(HANDLER_OUTCOMES.map((outcome) => store.getRun(runKeys.fulfillment(kind, id, outcome))));
  return runs.filter((run): run is Run => run !== undefined);
}
