import type { Store } from '../../src/store/index.js';

/** Where a store method takes the caller's time: the argument, or `now` of an options argument. */
type NowAt = { arg: number } | { option: number } | 'none';

/**
 * Every method of the `Store` interface, and where its `now` goes. A `Record` over its keys: a new
 * method is a compile error here until someone says whether it takes the caller's clock.
 */
const NOW_AT: Record<keyof Store, NowAt> = {
  description: 'none',
  open: 'none',
  close: 'none',
  insertEvent: { arg: 1 },
  getEvent: 'none',
  listEvents: 'none',
  insertDeadLetter: { arg: 1 },
  listDeadLetters: 'none',
  enqueueRun: { arg: 1 },
  getRun: 'none',
  claimRun: { option: 1 },
  renewLease: { arg: 3 },
  completeRun: { arg: 2 },
  failRun: { option: 2 },
  retryRun: { arg: 1 },
  listRuns: 'none',
  countRuns: 'none',
  updateResource: { arg: 1 },
  getResource: 'none',
  listResources: 'none',
  searchResources: 'none',
  putCheckoutAttempt: { arg: 1 },
  completeCheckoutAttempt: { arg: 2 },
  releaseCheckoutAttempt: { arg: 2 },
  getCheckoutAttempt: 'none',
  putTenantMerchant: { arg: 1 },
  completeTenantMerchant: { arg: 3 },
  releaseTenantMerchant: { arg: 3 },
  getTenantMerchant: 'none',
  findTenantByMerchantId: 'none',
  listTenantMerchants: 'none',
  putTenantCredentials: { arg: 1 },
  resealTenantCredentials: { arg: 4 },
  deleteTenantCredentials: 'none',
  getTenantCredentials: 'none',
  listTenantCredentials: 'none',
  acquireLock: { arg: 3 },
  releaseLock: { arg: 2 },
  prune: { option: 0 },
  appendActivity: { arg: 1 },
  listActivity: 'none',
  summarize: { option: 0 },
};

/**
 * Wrap `store` so that each time-taking call is checked against `clock`: a call that passes no
 * `now`, or another time than the clock's, is recorded in `violations` (and still made). Used to
 * prove that the engine, receiver, reconcile and checkout pass their one injected clock down.
 */
export function clockCheckedStore(store: Store, clock: () => Date): { store: Store; violations: string[] } {
  const violations: string[] = [];
  const checked = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      const at = NOW_AT[property as keyof Store];
      if (typeof value !== 'function' || at === undefined || at === 'none') return value;
      return (...args: unknown[]) => {
        const now = 'arg' in at ? args[at.arg] : (args[at.option] as { now?: unknown } | undefined)?.now;
        const expected = clock().getTime();
        if (!(now instanceof Date)) violations.push(`${String(property)} without now`);
        else if (now.getTime() !== expected) violations.push(`${String(property)} at ${now.toISOString()}, clock says ${new Date(expected).toISOString()}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: checked, violations };
}
