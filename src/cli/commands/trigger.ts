import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import {
  deliverSigned,
  isKnownEventType,
  isScenario,
  readSandboxCredentials,
  runScenario,
  sampleEventOf,
  SCENARIOS,
  type ScenarioReport,
  type SendReport,
} from '../../devtools/index.js';
import { EVENT_TYPES, type KnownEventType } from '../../schemas/index.js';
import { EXIT, UsageError } from '../exit.js';
import { output, type CliIO } from '../io.js';
import type { Register } from '../register.js';
import { httpUrl, signingSecret } from '../flags.js';

interface TriggerFlags {
  to?: string;
  sandbox?: string;
  data: string;
  secret?: string;
  json?: boolean;
}

function answers(sent: SendReport): string {
  const tally = Object.entries(sent.answers)
    .map(([answer, count]) => `${answer} ×${count}`)
    .join(', ');
  return `sent to ${sent.url}: ${sent.sent} deliveries, ${sent.delivered} answered 2xx (${tally})`;
}

function human(report: ScenarioReport): string {
  const width = Math.max(...report.steps.map((step) => (step.action === 'deposit' ? `deposit ${step.amount}` : step.action).length));
  return [
    `scenario ${report.scenario}: ${report.summary}`,
    `payment ${report.paymentId} for ${report.amount} (sandbox ${report.sandboxUrl})`,
    ...report.steps.map((step) => `  ${(step.action === 'deposit' ? `deposit ${step.amount}` : step.action).padEnd(width)}  -> ${step.status}`),
    `events emitted: ${report.events.map((event) => event.type).join(', ')}`,
    `final status: ${report.finalStatus} (received ${report.amountReceived ?? '?'} of ${report.amount})`,
    ...(report.sent ? [answers(report.sent)] : []),
  ].join('\n');
}

async function triggerScenario(name: (typeof SCENARIOS)[number], flags: TriggerFlags, io: CliIO, setExit: (code: number) => void) {
  const to = flags.to === undefined ? undefined : httpUrl('--to', flags.to);
  const sandboxUrl = flags.sandbox === undefined ? undefined : httpUrl('--sandbox', flags.sandbox);
  const credentials = await readSandboxCredentials(resolve(io.cwd, flags.data));
  const secret = flags.secret === undefined ? undefined : signingSecret(flags.secret, []);
  const report = await runScenario({ scenario: name, credentials, sandboxUrl, to, secret });
  output(io, flags.json ?? false, report, human);
  if (report.sent && report.sent.failed > 0) setExit(EXIT.failures);
}

async function triggerSample(type: KnownEventType, flags: TriggerFlags, io: CliIO, setExit: (code: number) => void) {
  if (flags.to === undefined) throw new UsageError(`a sample ${type} event needs a receiver: add --to URL.`);
  const url = httpUrl('--to', flags.to);
  const secret = signingSecret(flags.secret, loadConfig({ env: io.env, cwd: io.cwd }).webhookSecrets);
  const event = sampleEventOf(type);
  const result = await deliverSigned({ url, secret }, { id: event.id, body: JSON.stringify(event) });
  const resourceId = (event.data as { id: string }).id;
  output(io, flags.json ?? false, { event: { id: event.id, type, resourceId }, url, ...result }, () =>
    `sent ${type} ${event.id} (${type.split('.')[0]} ${resourceId}) to ${url}: ${result.status ?? 'no answer'}${result.ok ? '' : ` (${result.error})`}`,
  );
  if (!result.ok) setExit(EXIT.failures);
}

/** `checkout-kit trigger`: drive the sandbox through a scenario, or send one sample signed event (issue item 5). */
export const registerTrigger: Register = (program, io, setExit) => {
  program
    .command('trigger')
    .description(`drive a running sandbox through a scenario (${SCENARIOS.join(', ')}), or send a sample signed event (payment.paid, invoice.expired, …) to --to`)
    .argument('<scenario>', `one of the scenarios above, or an event type: ${EVENT_TYPES.join(', ')}`)
    .option('--to <url>', "also deliver the scenario's events here (required by duplicate-storm and by sample events)")
    .option('--sandbox <url>', 'the sandbox URL (default: baseUrl in its credentials.json)')
    .option('--data <dir>', "the sandbox's data folder, holding credentials.json", '.sandbox')
    .option('--secret <whsec>', "sign with this secret (default: the sandbox's webhookSecret for scenarios, CHECKOUT_WEBHOOK_SECRET for sample events)")
    .option('--json', 'JSON output')
    .action(async (name: string, flags: TriggerFlags) => {
      if (isScenario(name)) return triggerScenario(name, flags, io, setExit);
      if (isKnownEventType(name)) return triggerSample(name, flags, io, setExit);
      throw new UsageError(`unknown scenario "${name}": use one of ${SCENARIOS.join(', ')}, or an event type (${EVENT_TYPES.join(', ')}).`);
    });
};
