import type { KnownEventType } from '../schemas/index.js';

/** Named sandbox scenarios of `checkout-kit trigger`. */
export const SCENARIOS = ['paid', 'partial-then-paid', 'overpaid', 'expired', 'late-payment', 'duplicate-storm'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** One simulation call: a deposit of `amount`, or moving the payment past its expiry. */
export type SimulationStep = { action: 'deposit'; amount: string } | { action: 'expire' };

export interface ScenarioPlan {
  summary: string;
  /** The payment created. */
  amount: string;
  steps: SimulationStep[];
  /** Re-send every event of the payment this many times, all at once (needs a target URL). */
  storm?: number;
}

/** The amount of the payment every scenario (of `trigger` and of `check`) creates. */
export const SCENARIO_AMOUNT = '25.00';

/** The step sequences the scenarios of `trigger` and `check` share, against a payment of SCENARIO_AMOUNT. */
export const SCENARIO_STEPS = {
  payInFull: [{ action: 'deposit', amount: SCENARIO_AMOUNT }],
  payInTwoParts: [
    { action: 'deposit', amount: '10.00' },
    { action: 'deposit', amount: '15.00' },
  ],
  overpay: [{ action: 'deposit', amount: '30.00' }],
  expire: [{ action: 'expire' }],
  expireThenPay: [{ action: 'expire' }, { action: 'deposit', amount: SCENARIO_AMOUNT }],
} satisfies Record<string, SimulationStep[]>;

/** What each scenario does to a fresh test payment of 25.00. */
export const SCENARIO_PLANS: Record<ScenarioName, ScenarioPlan> = {
  paid: { summary: 'deposit the full amount', amount: SCENARIO_AMOUNT, steps: SCENARIO_STEPS.payInFull },
  'partial-then-paid': { summary: 'deposit 10.00, then the remaining 15.00', amount: SCENARIO_AMOUNT, steps: SCENARIO_STEPS.payInTwoParts },
  overpaid: { summary: 'deposit 30.00 for 25.00', amount: SCENARIO_AMOUNT, steps: SCENARIO_STEPS.overpay },
  expired: { summary: 'let the payment expire with nothing received', amount: SCENARIO_AMOUNT, steps: SCENARIO_STEPS.expire },
  'late-payment': { summary: 'expire the payment, then deposit the full amount after expiry', amount: SCENARIO_AMOUNT, steps: SCENARIO_STEPS.expireThenPay },
  'duplicate-storm': {
    summary: 'pay in full, then re-send each of its events 20 times at once',
    amount: SCENARIO_AMOUNT,
    steps: SCENARIO_STEPS.payInFull,
    storm: 20,
  },
};

/** What an event type announces, after its resource kind: `payment.partially_paid` → `partially_paid`. */
export type EventSuffix = KnownEventType extends infer T ? (T extends `${string}.${infer S}` ? S : never) : never;

/**
 * What `trigger EVENT-TYPE` does to a fresh test payment or invoice of SCENARIO_AMOUNT so that the
 * sandbox emits an event of that type about it.
 */
export const EVENT_STEPS: Record<EventSuffix, SimulationStep[]> = {
  created: [],
  partially_paid: SCENARIO_STEPS.payInTwoParts.slice(0, 1),
  paid: SCENARIO_STEPS.payInFull,
  overpaid: SCENARIO_STEPS.overpay,
  expired: SCENARIO_STEPS.expire,
};

export function isScenario(name: string): name is ScenarioName {
  return (SCENARIOS as readonly string[]).includes(name);
}
