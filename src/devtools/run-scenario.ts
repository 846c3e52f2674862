import { InvalidRequestError } from '../errors/index.js';
import type { SandboxCredentials } from '../sandbox/index.js';
import { driveSandbox } from './drive-sandbox.js';
import { SCENARIO_PLANS, type ScenarioName, type SimulationStep } from './scenarios.js';
import { sendEvents, type SendReport } from './send-events.js';

/**
 * @example
 * await runScenario({ scenario: 'late-payment', credentials: await readSandboxCredentials('.sandbox') });
 */
export interface RunScenarioOptions {
  scenario: ScenarioName;
  /** The running sandbox's `credentials.json`: the test merchant's keys and the webhook secret. */
  credentials: SandboxCredentials;
  /** The sandbox's URL. @default credentials.baseUrl */
  sandboxUrl?: string | undefined;
  /**
   * Also deliver the payment's events here, signed with the sandbox's webhook secret (the sandbox
   * itself delivers only to its `--webhook-url`s). Required by `duplicate-storm`.
   */
  to?: string | undefined;
  /** Sign what is sent to `to` with this secret. @default credentials.webhookSecret */
  secret?: string | undefined;
}

export interface ScenarioReport {
  scenario: ScenarioName;
  summary: string;
  sandboxUrl: string;
  paymentId: string;
  amount: string;
  /** Each simulation call with the status it left the payment in. */
  steps: Array<SimulationStep & { status: string }>;
  /** Events the sandbox emitted for the payment, oldest first. */
  events: Array<{ id: string; type: string }>;
  finalStatus: string;
  amountReceived: string | undefined;
  /** What `to` answered, when given. */
  sent: SendReport | undefined;
}

/**
 * Drive a running sandbox through a scenario: create a test payment as the test merchant, call
 * the simulation endpoints, then read back the events and the final payment.
 */
export async function runScenario(options: RunScenarioOptions): Promise<ScenarioReport> {
  const plan = SCENARIO_PLANS[options.scenario];
  if (plan.storm !== undefined && !options.to) {
    throw new InvalidRequestError(`${options.scenario} re-sends the payment's events to a receiver: give its URL (--to URL).`);
  }
  const sandboxUrl = (options.sandboxUrl ?? options.credentials.baseUrl).replace(/\/+$/, '');
  const payment = await driveSandbox({
    kind: 'payment',
    amount: plan.amount,
    steps: plan.steps,
    referenceId: `trigger-${options.scenario}`,
    credentials: options.credentials,
    sandboxUrl,
  });
  const sent = options.to
    ? await sendEvents(
        // Serialised as the sandbox serialises them: every copy carries the same bytes.
        payment.events.map((event) => ({ id: event.id, body: JSON.stringify(event) })),
        { url: options.to, secret: options.secret ?? options.credentials.webhookSecret },
        plan.storm === undefined ? {} : { copies: plan.storm, concurrent: true },
      )
    : undefined;

  return {
    scenario: options.scenario,
    summary: plan.summary,
    sandboxUrl,
    paymentId: payment.id,
    amount: plan.amount,
    steps: payment.steps,
    events: payment.events.map(({ id, type }) => ({ id, type })),
    finalStatus: payment.finalStatus,
    amountReceived: payment.amountReceived,
    sent,
  };
}
