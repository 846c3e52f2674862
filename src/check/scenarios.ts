import { SCENARIO_AMOUNT as AMOUNT, SCENARIO_STEPS as STEPS, type SimulationStep } from '../devtools/scenarios.js';
import type { HandlerOutcome } from '../fulfillment/outcome.js';
import type { DeliveryPlan } from './delivery-plans.js';

/** What `checkout-kit check` proves a backend survives. */
export type CheckScenario =
  | 'paid'
  | 'partial-then-paid'
  | 'overpaid'
  | 'underpaid'
  | 'expired'
  | 'late-payment'
  | 'duplicates'
  | 'reordering'
  | 'dropped-webhook'
  | 'stale-timestamp'
  | 'mislabelled-paid'
  | 'tenant-a-order'
  | 'tenant-b-same-order'
  | 'forged-cross-tenant'
  | 'tenant-missed-webhook';

/** A handler that must run exactly once, or may run at most once. Any outcome not listed must not run. */
export type Expectation = 'once' | 'at-most-once';

export interface CheckScenarioSpec {
  summary: string;
  /** The payment's amount (the scenario's deposits are against it). */
  amount: string;
  /** Sandbox simulation calls after the payment is created. */
  steps: SimulationStep[];
  delivery: DeliveryPlan;
  handlers: Partial<Record<HandlerOutcome, Expectation>>;
  /** The `paid` / `overpaid` call must say `ctx.late` so (checked when the backend records it). */
  late?: boolean;
  /** Webhooks must bring the news, or (for a lost webhook) reconcile must catch it. */
  caughtBy: 'webhook' | 'reconcile';
  /** Why a handler that must not run, ran: the scenario's point. */
  wrongRun?: string;
  /**
   * Partner platforms (`check --partner`): the tenant whose payment it is, of the two check
   * onboards; each handler call must say that tenant (`ctx.tenantId`). A partner check runs exactly
   * the scenarios that name one, a merchant check the others.
   */
  tenant?: 'a' | 'b';
  /** The order id's last part when scenarios share one (two tenants' orders with the same id). @default the scenario's name */
  order?: string;
}

/** Every scenario (a Record: one cannot be named without its plan and expectations). */
export const CHECK_SCENARIOS: Record<CheckScenario, CheckScenarioSpec> = {
  paid: {
    summary: 'pay the full amount',
    amount: AMOUNT,
    steps: STEPS.payInFull,
    delivery: 'in-order',
    handlers: { paid: 'once' },
    late: false,
    caughtBy: 'webhook',
  },
  'partial-then-paid': {
    summary: 'pay 10.00, then the remaining 15.00',
    amount: AMOUNT,
    steps: STEPS.payInTwoParts,
    delivery: 'in-order',
    handlers: { paid: 'once' },
    caughtBy: 'webhook',
    wrongRun: 'a partial payment is not paid: wait until amountReceived reaches amount',
  },
  overpaid: { summary: 'pay 30.00 for 25.00', amount: AMOUNT, steps: STEPS.overpay, delivery: 'in-order', handlers: { overpaid: 'once' }, caughtBy: 'webhook' },
  underpaid: {
    summary: 'pay 10.00, then let the payment expire',
    amount: AMOUNT,
    steps: [{ action: 'deposit', amount: '10.00' }, { action: 'expire' }],
    delivery: 'in-order',
    handlers: { underpaid: 'once' },
    caughtBy: 'webhook',
    wrongRun: 'an expired payment short of its amount is underpaid, not paid',
  },
  expired: {
    summary: 'let the payment expire unpaid',
    amount: AMOUNT,
    steps: STEPS.expire,
    delivery: 'in-order',
    handlers: { expired: 'once' },
    caughtBy: 'webhook',
  },
  'late-payment': {
    summary: 'let the payment expire, then pay in full',
    amount: AMOUNT,
    steps: STEPS.expireThenPay,
    delivery: 'in-order',
    // The expiry may be seen before the money (then `expired` runs first) or not.
    handlers: { paid: 'once', expired: 'at-most-once' },
    late: true,
    caughtBy: 'webhook',
  },
  duplicates: {
    summary: 'pay in full; every event delivered three times',
    amount: AMOUNT,
    steps: STEPS.payInFull,
    delivery: 'duplicated',
    handlers: { paid: 'once' },
    caughtBy: 'webhook',
  },
  reordering: {
    summary: 'pay 10.00 then 15.00; events delivered newest first',
    amount: AMOUNT,
    steps: STEPS.payInTwoParts,
    delivery: 'reversed',
    handlers: { paid: 'once' },
    caughtBy: 'webhook',
  },
  'dropped-webhook': {
    summary: 'pay in full; no webhook arrives, reconcile must catch it',
    amount: AMOUNT,
    steps: STEPS.payInFull,
    delivery: 'dropped',
    handlers: { paid: 'once' },
    caughtBy: 'reconcile',
  },
  'stale-timestamp': {
    summary: 'pay in full; each event first arrives signed an hour ago (must be refused), then fresh',
    amount: AMOUNT,
    steps: STEPS.payInFull,
    delivery: 'stale-then-fresh',
    handlers: { paid: 'once' },
    caughtBy: 'webhook',
  },
  'mislabelled-paid': {
    summary: 'pay 24.00 of 25.00; a payment.paid event (status PAID) arrives anyway',
    amount: AMOUNT,
    steps: [{ action: 'deposit', amount: '24.00' }],
    delivery: 'relabelled-paid',
    handlers: {},
    caughtBy: 'webhook',
    wrongRun:
      'the payment received 24.00 of 25.00 and only the event’s name (and status) said paid: the backend fulfilled without confirming the amounts. Decide from amountReceived and amount as read back from the service (checkout-kit’s engine re-reads the payment and classifies it)',
  },
  'tenant-a-order': {
    summary: 'tenant A pays its order 1001 in full',
    amount: AMOUNT,
    steps: STEPS.payInFull,
    delivery: 'in-order',
    handlers: { paid: 'once' },
    caughtBy: 'webhook',
    tenant: 'a',
    order: '1001',
  },
  'tenant-b-same-order': {
    summary: "tenant B pays its own order 1001 (the same id as tenant A's) in full",
    amount: AMOUNT,
    steps: STEPS.payInFull,
    delivery: 'in-order',
    handlers: { paid: 'once' },
    caughtBy: 'webhook',
    tenant: 'b',
    order: '1001',
  },
  'forged-cross-tenant': {
    summary: "tenant A's payment stays unpaid; a delivery naming tenant B's merchant says it is paid",
    amount: AMOUNT,
    steps: [],
    delivery: 'forged-other-tenant',
    handlers: {},
    caughtBy: 'webhook',
    tenant: 'a',
    wrongRun:
      "the event's body said paid and named another tenant's merchant, but the payment as read back from the service is unpaid and tenant A's: take the merchant and the amounts from a confirmed read, never from the event",
  },
  'tenant-missed-webhook': {
    summary: "tenant B's payment is paid; no webhook arrives, reconcile must catch it",
    amount: AMOUNT,
    steps: STEPS.payInFull,
    delivery: 'dropped',
    handlers: { paid: 'once' },
    caughtBy: 'reconcile',
    tenant: 'b',
  },
};

/** Every scenario, in report order. */
const ALL_SCENARIOS = Object.keys(CHECK_SCENARIOS) as CheckScenario[];

/** A merchant backend's scenarios, in report order. */
export const CHECK_SCENARIO_NAMES = ALL_SCENARIOS.filter((name) => CHECK_SCENARIOS[name].tenant === undefined);

/** A partner platform's scenarios (`check --partner`), in report order. */
export const PARTNER_SCENARIO_NAMES = ALL_SCENARIOS.filter((name) => CHECK_SCENARIOS[name].tenant !== undefined);

export function isCheckScenario(name: string): name is CheckScenario {
  return Object.hasOwn(CHECK_SCENARIOS, name);
}
