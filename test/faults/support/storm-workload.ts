/**
 * The buyers of a storm: payments created through `serve`'s `POST /checkout` (so the store knows
 * every payment, as in a real shop, and reconcile can find what the webhooks miss), then paid,
 * part-paid, overpaid, topped up or expired through the sandbox's simulation endpoints.
 */
import { postCheckout } from '../../support/post-checkout.js';
import { postJson } from './storm-sandbox.js';
import { sleep } from './procs-children.js';

export type PlanKind = 'paid' | 'partial-then-paid' | 'overpaid' | 'paid-then-topup' | 'underpaid' | 'expired' | 'late' | 'pending' | 'created';
type Step = { deposit: number } | { expire: true };

export interface PaymentPlan {
  orderId: string;
  kind: PlanKind;
  /** Amount in cents. */
  cents: number;
  steps: Step[];
}

/** Weight of each kind, and how many events it makes the sandbox send (created + one per step). */
const KINDS: Array<{ kind: PlanKind; weight: number }> = [
  { kind: 'paid', weight: 20 },
  { kind: 'partial-then-paid', weight: 15 },
  { kind: 'overpaid', weight: 10 },
  { kind: 'paid-then-topup', weight: 10 },
  { kind: 'underpaid', weight: 10 },
  { kind: 'expired', weight: 10 },
  { kind: 'late', weight: 10 },
  { kind: 'pending', weight: 10 },
  { kind: 'created', weight: 5 },
];
const AMOUNTS = [1000, 1250, 2500, 775, 4999, 120];

function stepsOf(kind: PlanKind, cents: number): Step[] {
  const part = Math.floor(cents * 0.4);
  const extra = 150;
  switch (kind) {
    case 'paid':
      return [{ deposit: cents }];
    case 'partial-then-paid':
      return [{ deposit: part }, { deposit: cents - part }];
    case 'overpaid':
      return [{ deposit: cents + extra }];
    case 'paid-then-topup':
      return [{ deposit: cents }, { deposit: extra }];
    case 'underpaid':
      return [{ deposit: part }, { expire: true }];
    case 'expired':
      return [{ expire: true }];
    case 'late':
      return [{ expire: true }, { deposit: cents }];
    case 'pending':
      return [{ deposit: part }];
    case 'created':
      return [];
  }
}

/** Enough payments for about `events` sandbox events (each plan sends 1 + its steps). */
export function planPayments(events: number, random: () => number, prefix: string): PaymentPlan[] {
  const total = KINDS.reduce((sum, k) => sum + k.weight, 0);
  const plans: PaymentPlan[] = [];
  let planned = 0;
  while (planned < events) {
    let pick = random() * total;
    const kind = KINDS.find((k) => (pick -= k.weight) < 0)?.kind ?? 'paid';
    const cents = AMOUNTS[Math.floor(random() * AMOUNTS.length)]!;
    const steps = stepsOf(kind, cents);
    plans.push({ orderId: `${prefix}-${plans.length}`, kind, cents, steps });
    planned += 1 + steps.length;
  }
  return plans;
}

export const money = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

export interface WorkloadResult {
  /** orderId → payment id. */
  paymentOf: Map<string, string>;
  /** POST /checkout calls that had to be repeated (serve down or killed mid-request). */
  checkoutRetries: number;
  /** Orders that could not be created before the deadline. */
  notCreated: string[];
  /** Simulation calls that did not answer 200. */
  stepErrors: string[];
  seconds: number;
}

export interface WorkloadOptions {
  plans: PaymentPlan[];
  sandboxUrl: string;
  /** Base URLs of the shop (`serve`) instances; a POST /checkout goes to one at random, another on failure. */
  shopUrls: string[];
  workers: number;
  random: () => number;
  /** Random pause before each simulation step. */
  stepDelayMs: [number, number];
  /** Give up creating an order after this long. */
  createTimeoutMs: number;
  /** Counts the plans carried out so far (for pacing the kills over the storm). */
  progress?: { done: number };
}

/** Create one order's payment through a shop, retrying while shops are down; the payment id, or undefined. */
async function createPayment(options: WorkloadOptions, plan: PaymentPlan, onRetry: () => void): Promise<string | undefined> {
  const deadline = Date.now() + options.createTimeoutMs;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const shop = options.shopUrls[Math.floor(options.random() * options.shopUrls.length)]!;
    try {
      const response = await postCheckout(
        shop,
        { orderId: plan.orderId, amount: money(plan.cents), email: 'buyer@example.com' },
        { signal: AbortSignal.timeout(30_000) },
      );
      await response.arrayBuffer();
      const location = response.headers.get('location');
      if (response.status === 303 && location) return location.split('/').pop()!;
    } catch {
      // the shop is down or was killed mid-request: the same order id again gets the same payment
    }
    onRetry();
    await sleep(Math.min(200 * (attempt + 1), 1_000));
  }
  return undefined;
}

/** Run every plan with `workers` buyers at once. */
export async function runWorkload(options: WorkloadOptions): Promise<WorkloadResult> {
  const started = Date.now();
  const result: WorkloadResult = { paymentOf: new Map(), checkoutRetries: 0, notCreated: [], stepErrors: [], seconds: 0 };
  let next = 0;
  const pause = () => sleep(options.stepDelayMs[0] + options.random() * (options.stepDelayMs[1] - options.stepDelayMs[0]));
  await Promise.all(
    Array.from({ length: options.workers }, async () => {
      while (next < options.plans.length) {
        const plan = options.plans[next++]!;
        const id = await createPayment(options, plan, () => (result.checkoutRetries += 1));
        if (!id) {
          result.notCreated.push(plan.orderId);
          continue;
        }
        result.paymentOf.set(plan.orderId, id);
        for (const step of plan.steps) {
          await pause();
          const url = `${options.sandboxUrl}/sandbox/payments/${id}/${'expire' in step ? 'expire' : 'deposit'}`;
          const answer = await postJson(url, 'expire' in step ? {} : { amount: money(step.deposit) }).catch((error: Error) => ({
            status: 0,
            body: error.message,
          }));
          if (answer.status !== 200) result.stepErrors.push(`${plan.orderId} ${url}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
        }
        if (options.progress) options.progress.done += 1;
      }
    }),
  );
  result.seconds = (Date.now() - started) / 1000;
  return result;
}
