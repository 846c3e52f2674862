import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import {
  deliverSigned,
  isKnownEventType,
  isScenario,
  readSandboxCredentials,
  runScenario,
  sampleEventOf,
  sandboxAnswers,
  SCENARIOS,
  triggerEvent,
  type ScenarioReport,
  type SendReport,
  type SimulationStep,
  type TriggerEventReport,
} from '../../devtools/index.js';
import { CREDENTIALS_FILE, type SandboxCredentials } from '../../sandbox/index.js';
import { EVENT_TYPES, type KnownEventType } from '../../schemas/index.js';
import { DEFAULT_SANDBOX_DATA as DEFAULT_DATA } from '../defaults.js';
import { EXIT, UsageError } from '../exit.js';
import { output, type CliIO } from '../io.js';
import { describeAnswer } from '../../webhooks/receive/receiver-answer.js';
import { httpUrl, signingSecret } from '../flags.js';

export interface TriggerFlags {
  to?: string;
  sandbox?: string;
  data?: string;
  secret?: string;
  json?: boolean;
}

function answers(sent: SendReport): string {
  const tally = Object.entries(sent.answers)
    .map(([answer, count]) => `${answer} ×${count}`)
    .join(', ');
  return `sent to ${sent.url}: ${sent.sent} deliveries, ${sent.delivered} answered 2xx (${tally})`;
}

function stepLines(steps: Array<SimulationStep & { status: string }>): string[] {
  const label = (step: SimulationStep) => (step.action === 'deposit' ? `deposit ${step.amount}` : step.action);
  const width = Math.max(0, ...steps.map((step) => label(step).length));
  return steps.map((step) => `  ${label(step).padEnd(width)}  -> ${step.status}`);
}

function human(report: ScenarioReport): string {
  return [
    `scenario ${report.scenario}: ${report.summary}`,
    `payment ${report.paymentId} for ${report.amount} (sandbox ${report.sandboxUrl})`,
    ...stepLines(report.steps),
    `events emitted: ${report.events.map((event) => event.type).join(', ')}`,
    `final status: ${report.finalStatus} (received ${report.amountReceived ?? '?'} of ${report.amount})`,
    ...(report.sent ? [answers(report.sent)] : []),
  ].join('\n');
}

function humanEvent(report: TriggerEventReport): string {
  return [
    `${report.type}: ${report.kind} ${report.resourceId} for ${report.amount} (sandbox ${report.sandboxUrl})`,
    ...stepLines(report.steps),
    `events emitted: ${report.events.map((event) => event.type).join(', ')}`,
    `final status: ${report.finalStatus} (received ${report.amountReceived ?? '?'} of ${report.amount})`,
    report.sent
      ? `${report.event.type} ${report.event.id} ${answers(report.sent)}`
      : `${report.event.type} ${report.event.id}: delivered by the sandbox to its --webhook-url(s) (add --to URL to send it elsewhere too)`,
  ].join('\n');
}

async function triggerScenario(name: (typeof SCENARIOS)[number], flags: TriggerFlags, io: CliIO, setExit: (code: number) => void) {
  const to = flags.to === undefined ? undefined : httpUrl('--to', flags.to);
  const sandboxUrl = flags.sandbox === undefined ? undefined : httpUrl('--sandbox', flags.sandbox);
  const credentials = await readSandboxCredentials(resolve(io.cwd, flags.data ?? DEFAULT_DATA));
  const secret = flags.secret === undefined ? undefined : signingSecret(flags.secret, []);
  const report = await runScenario({ scenario: name, credentials, sandboxUrl, to, secret });
  output(io, flags.json ?? false, report, human);
  if (report.sent && report.sent.failed > 0) setExit(EXIT.failures);
}

/**
 * The sandbox an event type is triggered at: the one `--sandbox` / `--data` name (it must answer),
 * else the one whose credentials are in `.sandbox` when it answers. Otherwise why there is none.
 */
async function findSandbox(flags: TriggerFlags, io: CliIO): Promise<{ credentials: SandboxCredentials; url: string | undefined } | { none: string }> {
  const named = flags.sandbox !== undefined || flags.data !== undefined;
  const url = flags.sandbox === undefined ? undefined : httpUrl('--sandbox', flags.sandbox);
  const dir = resolve(io.cwd, flags.data ?? DEFAULT_DATA);
  if (!named && !existsSync(join(dir, CREDENTIALS_FILE))) return { none: `no sandbox credentials at ${join(dir, CREDENTIALS_FILE)}` };
  const credentials = await readSandboxCredentials(dir);
  if (!named && !(await sandboxAnswers(credentials.baseUrl.replace(/\/+$/, '')))) return { none: `no sandbox answers at ${credentials.baseUrl}` };
  return { credentials, url };
}

async function triggerType(type: KnownEventType, flags: TriggerFlags, io: CliIO, setExit: (code: number) => void) {
  const to = flags.to === undefined ? undefined : httpUrl('--to', flags.to);
  const sandbox = await findSandbox(flags, io);
  if ('none' in sandbox) return triggerSample(type, sandbox.none, to, flags, io, setExit);
  const secret = flags.secret === undefined ? undefined : signingSecret(flags.secret, []);
  const report = await triggerEvent({ type, credentials: sandbox.credentials, sandboxUrl: sandbox.url, to, secret });
  output(io, flags.json ?? false, report, humanEvent);
  if (report.sent && report.sent.failed > 0) setExit(EXIT.failures);
}

/** One sample signed event of `type` to `url`: `why` says why there is no sandbox to make a real one. */
async function triggerSample(type: KnownEventType, why: string, url: string | undefined, flags: TriggerFlags, io: CliIO, setExit: (code: number) => void) {
  if (url === undefined)
    throw new UsageError(`${why}, so trigger sends a sample ${type} event, which needs a receiver: add --to URL (or start \`checkout-kit sandbox\` first).`);
  const secret = signingSecret(flags.secret, loadConfig({ env: io.env, cwd: io.cwd }).webhookSecrets);
  const event = sampleEventOf(type);
  const result = await deliverSigned({ url, secret }, { id: event.id, body: JSON.stringify(event) });
  const resourceId = (event.data as { id: string }).id;
  output(io, flags.json ?? false, { sample: true, why, event: { id: event.id, type, resourceId }, url, ...result }, () =>
    [
      `sent sample ${type} ${event.id} (${type.split('.')[0]} ${resourceId}) to ${url}: ${describeAnswer({ status: result.status, ...result.answer })}`,
      `a sample (${why}): its ${type.split('.')[0]} exists nowhere; checkout-kit's receiver acknowledges it without a confirm read or handler`,
    ].join('\n'),
  );
  if (!result.ok) setExit(EXIT.failures);
}

/** `checkout-kit trigger <scenario | event type>`: a scenario, an event type, or a sample event; exit 1 when a delivery failed. */
export async function trigger(name: string, flags: TriggerFlags, io: CliIO, setExit: (code: number) => void): Promise<void> {
  if (isScenario(name)) return triggerScenario(name, flags, io, setExit);
  if (isKnownEventType(name)) return triggerType(name, flags, io, setExit);
  throw new UsageError(`unknown scenario "${name}": use one of ${SCENARIOS.join(', ')}, or an event type (${EVENT_TYPES.join(', ')}).`);
}
