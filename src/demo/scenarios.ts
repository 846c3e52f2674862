/** What happens to a demo order after checkout. */
export type DemoScenario = 'paid' | 'partial-then-paid' | 'overpaid' | 'underpaid' | 'expired' | 'late';

export const DEMO_SCENARIOS: readonly DemoScenario[] = ['paid', 'partial-then-paid', 'overpaid', 'underpaid', 'expired', 'late'];

/** One simulation step against the sandbox: a deposit of a fraction of the amount, or expiry. */
export type DemoStep = { deposit: string } | { expire: true };

/** The steps of each scenario, as fractions of the order amount (exact decimal strings). */
export const SCENARIO_STEPS: Record<DemoScenario, DemoStep[]> = {
  paid: [{ deposit: '1' }],
  'partial-then-paid': [{ deposit: '0.4' }, { deposit: '0.6' }],
  overpaid: [{ deposit: '1.2' }],
  underpaid: [{ deposit: '0.5' }, { expire: true }],
  expired: [{ expire: true }],
  late: [{ expire: true }, { deposit: '1' }],
};

/**
 * The outcome the engine must reach for each scenario, the handlers that must run exactly once,
 * and those that may run at most once. A late payment's `expired` handler runs only if the expiry
 * was seen before the money arrived (the engine always decides from the latest state).
 */
export const EXPECTED: Record<DemoScenario, { outcome: string; handlers: string[]; optional?: string[]; late?: boolean }> = {
  paid: { outcome: 'paid', handlers: ['paid'] },
  'partial-then-paid': { outcome: 'paid', handlers: ['paid'] },
  overpaid: { outcome: 'overpaid', handlers: ['overpaid'] },
  underpaid: { outcome: 'underpaid', handlers: ['underpaid'] },
  expired: { outcome: 'expired', handlers: ['expired'] },
  late: { outcome: 'paid', handlers: ['paid'], optional: ['expired'], late: true },
};
