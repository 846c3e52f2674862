import { DELIVERY_PLANS } from './delivery-plans.js';
import { HANDLER_OUTCOMES as OUTCOMES, runKeys, type HandlerOutcome } from '../runs/index.js';
import type { Observed } from './evidence.js';
import type { ReconcileRun, SentDelivery } from './report.js';
import type { CheckScenarioSpec } from './scenarios.js';
import { describeAnswer } from '../webhooks/receive/receiver-answer.js';

/** What happened in one scenario, as `evaluate` needs it. */
export interface ScenarioObservation {
  spec: CheckScenarioSpec;
  paymentId: string | undefined;
  /** Partner checks: the tenant the payment was created for. */
  tenantId?: string | undefined;
  createdVia: 'backend' | 'sandbox' | undefined;
  /** Why the payment could not be created or driven (then nothing else is judged). */
  setupError: string | undefined;
  deliveries: readonly SentDelivery[];
  /** What the backend had done once the webhooks settled (before reconcile). */
  beforeReconcile: Observed;
  /** What it had done at the end. */
  final: Observed;
}

/** Where the backend's facts came from and what could explain a missing call. */
export interface EvaluationContext {
  evidence: { kind: 'record' | 'store'; description: string };
  reconcile: ReconcileRun | undefined;
  /** Why payments were created at the sandbox (the backend has no checkout route), if they were. */
  noCheckoutRoute: string | undefined;
  timeoutMs: number;
}

function refusals(deliveries: readonly SentDelivery[]): string[] {
  const groups = new Map<string, { types: Set<string>; count: number; answer: string }>();
  for (const delivery of deliveries) {
    if (delivery.expected !== 'accept' || delivery.accepted) continue;
    const answer = describeAnswer(delivery);
    const group = groups.get(answer) ?? { types: new Set<string>(), count: 0, answer };
    group.types.add(delivery.type);
    group.count += 1;
    groups.set(answer, group);
  }
  return [...groups.values()].map(
    (group) =>
      `refused ${group.count === 1 ? 'a genuine delivery' : `${group.count} genuine deliveries`} (${[...group.types].join(', ')}) that it must acknowledge: ${group.answer}`,
  );
}

function wronglyAccepted(deliveries: readonly SentDelivery[]): string[] {
  return deliveries
    .filter((delivery) => delivery.expected === 'refuse' && delivery.accepted)
    .map(
      (delivery) =>
        `accepted (${delivery.status}) a ${delivery.type} delivery signed ${delivery.signedSecondsAgo} s ago: it must be refused (a replayed or delayed delivery) — verify the signature's timestamp, within a few minutes either way (checkout-kit's receiver allows 300 s)`,
    );
}

function missing(outcome: HandlerOutcome, observation: ScenarioObservation, context: EvaluationContext, refused: boolean): string {
  const { spec, paymentId } = observation;
  const never = `${outcome} never ran`;
  if (refused) return `${never}: its deliveries were refused (see above)`;
  const notes = observation.final.notes.length > 0 ? `: ${observation.final.notes.join('; ')}` : '';
  if (notes) return `${never}${notes}`;
  if (spec.caughtBy === 'reconcile') {
    if (context.noCheckoutRoute !== undefined) {
      return `${never}: the backend never recorded this payment (${context.noCheckoutRoute}), so a reconcile pass cannot know it. Create payments through the backend (checkout-kit's checkout helper records them) and give its route with --checkout-url`;
    }
    if (!context.reconcile)
      return `${never}: no reconcile pass ran (--no-reconcile). Webhooks get lost: run \`checkout-kit reconcile\` from cron (see deploy/)`;
    if (!context.reconcile.ok) return `${never}: the reconcile pass failed (${context.reconcile.command}): ${context.reconcile.detail}`;
    return `${never}: the reconcile pass (${context.reconcile.command}) did not fulfil it — does it run with the backend's store and fulfillment module?`;
  }
  const where =
    context.evidence.kind === 'record'
      ? `no ${outcome} call for payment ${paymentId} in the ${context.evidence.description}`
      : `no completed run ${runKeys.fulfillment('payment', paymentId ?? '?', outcome)} in the ${context.evidence.description}`;
  return `${never}: the backend acknowledged the deliveries, but ${where} within ${Math.round(context.timeoutMs / 1000)} s. Is the fulfillment wired to the receiver (attachFulfillment) and does ${context.evidence.kind === 'record' ? 'the fulfillment module use recordHandlerCalls with CHECKOUT_CHECK_RECORD set' : 'the backend use this store (--store / CHECKOUT_STORE)'}?`;
}

/** Judge one scenario: every delivery answered as it should, each expected handler ran once, nothing else ran. */
export function evaluate(observation: ScenarioObservation, context: EvaluationContext): string[] {
  if (observation.setupError !== undefined) return [observation.setupError];
  const { spec, final, beforeReconcile } = observation;
  const refused = refusals(observation.deliveries);
  const causes = [...refused, ...wronglyAccepted(observation.deliveries)];
  const expectedOutcomes = OUTCOMES.filter((outcome) => spec.handlers[outcome] === 'once').join(' or ') || 'pending (no handler yet)';
  for (const outcome of OUTCOMES) {
    const calls = final.calls[outcome];
    const expectation = spec.handlers[outcome];
    if (calls.length > 1) {
      causes.push(`${outcome} ran ${calls.length} times (expected ${expectation === undefined ? 'never' : 'once'}): ${DELIVERY_PLANS[spec.delivery].twice}`);
    } else if (calls.length === 1 && expectation === undefined) {
      causes.push(
        `${outcome} ran, but this payment's outcome is ${expectedOutcomes}: ${spec.wrongRun ?? 'decide from the payment’s amounts and expiry as read back from the service'}`,
      );
    } else if (calls.length === 0 && expectation === 'once') {
      causes.push(missing(outcome, observation, context, refused.length > 0));
    }
    if (calls.length === 1 && expectation === 'once' && spec.caughtBy === 'webhook' && beforeReconcile.calls[outcome].length === 0 && refused.length === 0) {
      causes.push(`${outcome} ran only when reconcile polled, not on the acknowledged webhooks: the webhook path does not fulfil`);
    }
    const told = calls[0]?.tenantId;
    if (calls.length === 1 && observation.tenantId !== undefined && told !== undefined && told !== observation.tenantId) {
      causes.push(
        `${outcome} ran for tenant ${told}, but the payment is tenant ${observation.tenantId}'s: take the tenant from the merchant of a confirmed read (ctx.tenantId)`,
      );
    }
    const late = calls[0]?.late;
    if (calls.length === 1 && spec.late !== undefined && (outcome === 'paid' || outcome === 'overpaid') && late !== undefined && late !== spec.late) {
      causes.push(`${outcome} ran with ctx.late = ${late}, but the money arrived ${spec.late ? 'after' : 'before'} expiry`);
    }
  }
  return causes;
}
