import type { SandboxEvent } from '../sandbox/index.js';

/** How a scenario's events reach the backend: the faults a real network and sender produce. */
export type DeliveryPlan = 'in-order' | 'duplicated' | 'reversed' | 'dropped' | 'stale-then-fresh' | 'relabelled-paid' | 'forged-other-tenant';

/** Signed this long ago, a delivery is far outside any sane tolerance (the sandbox's stale fault uses the same). */
export const STALE_SECONDS = 3600;

export interface PlanSender {
  /** Sign (timestamp `ageSeconds` before now) and deliver one event; its answer is recorded with what was expected. */
  send(event: SandboxEvent, options?: { ageSeconds?: number }): Promise<void>;
  /** Partner checks: the merchant of the tenant the payment is not for. */
  otherMerchantId?: string | undefined;
}

export interface PlanSpec {
  /** What the plan does to the events, for the report. */
  summary: string;
  /** Deliver the events one step of the scenario emitted (called after each step, and after creation). */
  afterStep?(events: readonly SandboxEvent[], sender: PlanSender): Promise<void>;
  /** Deliver after the last step, given every event of the payment. */
  afterAll?(events: readonly SandboxEvent[], sender: PlanSender): Promise<void>;
  /** Why a handler that ran twice under this plan did. */
  twice: string;
}

const inOrder = async (events: readonly SandboxEvent[], sender: PlanSender) => {
  for (const event of events) await sender.send(event);
};

const REPEATED =
  'the same event delivered again ran it again: dedupe deliveries by event id and key the work on ctx.key (checkout-kit’s receiver stores each event id once)';

/** Every plan (a Record, so a new plan cannot be left without its delivery). */
export const DELIVERY_PLANS: Record<DeliveryPlan, PlanSpec> = {
  'in-order': {
    summary: 'each event once, in order',
    afterStep: inOrder,
    twice: 'one handler must run once per payment and outcome, however many events say so',
  },
  duplicated: {
    summary: 'each event three times, two of them at once',
    async afterStep(events, sender) {
      for (const event of events) {
        await Promise.all([sender.send(event), sender.send(event)]);
        await sender.send(event);
      }
    },
    twice: REPEATED,
  },
  reversed: {
    summary: 'every event once, newest first',
    async afterAll(events, sender) {
      for (const event of [...events].reverse()) await sender.send(event);
    },
    twice: 'an older event delivered after a newer one ran it again: outcomes only move forward, decide from the payment as read from the service',
  },
  dropped: { summary: 'no event delivered (a lost webhook)', twice: 'reconcile ran it again: key the work on ctx.key' },
  'stale-then-fresh': {
    summary: `each event first signed ${STALE_SECONDS} s ago (to be refused), then freshly signed`,
    async afterStep(events, sender) {
      for (const event of events) {
        await sender.send(event, { ageSeconds: STALE_SECONDS });
        await sender.send(event);
      }
    },
    twice: 'the refused stale delivery and its fresh copy both ran it: refuse before doing anything, and dedupe by event id',
  },
  'relabelled-paid': {
    summary: 'each event in order, then the last one again as payment.paid (status PAID, amounts unchanged)',
    afterStep: inOrder,
    async afterAll(events, sender) {
      const last = events.at(-1);
      if (!last) return;
      await sender.send({ ...last, id: `${last.id}_paid`, type: last.type.replace(/\.[a-z_]+$/, '.paid'), data: { ...last.data, status: 'PAID' } });
    },
    twice: REPEATED,
  },
  'forged-other-tenant': {
    summary:
      "each event in order, then a payment.paid (status PAID, amountReceived = amount) naming the other tenant's merchant, signed with the webhook secret",
    afterStep: inOrder,
    async afterAll(events, sender) {
      const first = events[0];
      if (!first || sender.otherMerchantId === undefined) return;
      const data = { ...first.data, status: 'PAID', amountReceived: first.data.amount, merchantId: sender.otherMerchantId };
      await sender.send({ ...first, id: `${first.id}_forged`, type: 'payment.paid', data });
    },
    twice: REPEATED,
  },
};
