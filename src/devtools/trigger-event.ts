import { CheckoutKitError } from '../errors/index.js';
import { resourceKindOf, type KnownEventType } from '../schemas/index.js';
import type { SandboxCredentials } from '../sandbox/index.js';
import { driveSandbox } from './drive-sandbox.js';
import { EVENT_STEPS, SCENARIO_AMOUNT, type EventSuffix, type SimulationStep } from './scenarios.js';
import { sendEvents, type SendReport } from './send-events.js';

/**
 * @example
 * await triggerEvent({ type: 'payment.paid', credentials: await readSandboxCredentials('.sandbox'), to: 'http://127.0.0.1:3000/webhooks/checkout' });
 */
export interface TriggerEventOptions {
  type: KnownEventType;
  /** The running sandbox's `credentials.json`: the test merchant's keys and the webhook secret. */
  credentials: SandboxCredentials;
  /** The sandbox's URL. @default credentials.baseUrl */
  sandboxUrl?: string | undefined;
  /** Also deliver the event here (the sandbox itself delivers only to its `--webhook-url`s). */
  to?: string | undefined;
  /** Sign what is sent to `to` with this secret. @default credentials.webhookSecret */
  secret?: string | undefined;
}

export interface TriggerEventReport {
  type: KnownEventType;
  kind: 'payment' | 'invoice';
  sandboxUrl: string;
  /** The payment or invoice created at the sandbox. */
  resourceId: string;
  amount: string;
  /** Each simulation call with the status it left the resource in. */
  steps: Array<SimulationStep & { status: string }>;
  /** The event of `type` the sandbox emitted about the resource. */
  event: { id: string; type: string };
  /** Every event the sandbox emitted about the resource, oldest first. */
  events: Array<{ id: string; type: string }>;
  finalStatus: string;
  amountReceived: string | undefined;
  /** What `to` answered, when given. */
  sent: SendReport | undefined;
}

/**
 * Make a running sandbox emit an event of `type` about a real resource: create a test payment or
 * invoice there and drive it to the state the type announces (`payment.paid`: a deposit of the full
 * amount), then deliver the sandbox's own event to `to`. A receiver configured for that sandbox
 * confirms it with a read that succeeds.
 */
export async function triggerEvent(options: TriggerEventOptions): Promise<TriggerEventReport> {
  const { type } = options;
  const kind = resourceKindOf(type) as 'payment' | 'invoice';
  const sandboxUrl = (options.sandboxUrl ?? options.credentials.baseUrl).replace(/\/+$/, '');
  const resource = await driveSandbox({
    kind,
    amount: SCENARIO_AMOUNT,
    steps: EVENT_STEPS[type.slice(kind.length + 1) as EventSuffix],
    referenceId: `trigger-${type}`,
    credentials: options.credentials,
    sandboxUrl,
  });
  const event = resource.events.findLast((candidate) => candidate.type === type);
  if (!event)
    throw new CheckoutKitError(
      `the sandbox at ${sandboxUrl} emitted no ${type} event about ${kind} ${resource.id} (it emitted: ${resource.events.map((e) => e.type).join(', ') || 'none'}).`,
    );
  const sent = options.to
    ? // Serialised as the sandbox serialises it: the bytes it delivers to its own --webhook-urls.
      await sendEvents([{ id: event.id, body: JSON.stringify(event) }], { url: options.to, secret: options.secret ?? options.credentials.webhookSecret })
    : undefined;
  return {
    type,
    kind,
    sandboxUrl,
    resourceId: resource.id,
    amount: SCENARIO_AMOUNT,
    steps: resource.steps,
    event: { id: event.id, type: event.type },
    events: resource.events.map(({ id, type: eventType }) => ({ id, type: eventType })),
    finalStatus: resource.finalStatus,
    amountReceived: resource.amountReceived,
    sent,
  };
}
