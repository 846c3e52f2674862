import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Table from 'cli-table3';
import { LOOPBACK_URL_HOSTS } from '../../access/local-request.js';
import {
  backendEnv,
  CHECK_SCENARIO_NAMES,
  PARTNER_SCENARIO_NAMES,
  chooseEvidence,
  isCheckScenario,
  reconcileRunner,
  runCheck,
  startChild,
  type CheckOptions,
  type CheckReport,
  type CheckScenario,
  type ScenarioReport,
} from '../../check/index.js';
import { loadConfig } from '../../config/index.js';
import { ConfigError } from '../../errors/index.js';
import type { HandlerOutcome } from '../../fulfillment/outcome.js';
import { openStore } from '../../store/open.js';
import type { Store } from '../../store/types.js';
import { DEFAULT_SANDBOX_PORT } from '../defaults.js';
import { EXIT, UsageError } from '../exit.js';
import { duration, httpUrl, MAX_TIMER_MS } from '../flags.js';
import { table, writeLine, type CliIO } from '../io.js';

export interface CheckFlags {
  against: string;
  start?: string;
  checkoutUrl?: string;
  checkout: boolean;
  record?: string;
  store?: string;
  data?: string;
  sandboxPort?: number;
  reconcile?: string | false;
  only?: string;
  partner?: boolean;
  timeout: string;
  settle: string;
  json?: boolean;
}

function scenariosOf(only: string | undefined, partner: boolean): CheckScenario[] | undefined {
  const known = partner ? PARTNER_SCENARIO_NAMES : CHECK_SCENARIO_NAMES;
  if (only === undefined) return undefined;
  const names = only
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !isCheckScenario(name) || !known.includes(name));
  if (names.length === 0 || unknown.length > 0)
    throw new UsageError(
      `--only takes scenarios from ${known.join(', ')}${partner ? '' : ' (with --partner: ' + PARTNER_SCENARIO_NAMES.join(', ') + ')'}; unknown: ${unknown.join(', ') || '(none given)'}.`,
    );
  return names as CheckScenario[];
}

const calls = (counts: Partial<Record<HandlerOutcome, number>>) =>
  Object.entries(counts)
    .filter(([, n]) => n !== 0)
    .map(([outcome, n]) => `${outcome} ×${n}`)
    .join(', ') || 'none';

const expected = (scenario: ScenarioReport) =>
  Object.entries(scenario.expected)
    .map(([outcome, expectation]) => (expectation === 'once' ? `${outcome} ×1` : `${outcome} ≤1`))
    .join(', ') || 'none';

function deliveries(scenario: ScenarioReport): string {
  const sent = scenario.deliveries.length;
  if (sent === 0) return 'none sent';
  const accepted = scenario.deliveries.filter((delivery) => delivery.accepted).length;
  return `${sent} sent, ${accepted} accepted${sent > accepted ? `, ${sent - accepted} refused` : ''}`;
}

function rows(report: CheckReport) {
  return report.scenarios.map((scenario) => ({
    scenario: scenario.scenario,
    expected: expected(scenario),
    'handler calls': calls(scenario.calls),
    deliveries: deliveries(scenario),
    result: scenario.ok ? 'ok' : 'FAIL',
  }));
}

function human(report: CheckReport, tty: boolean): string {
  const columns = ['scenario', 'expected', 'handler calls', 'deliveries', 'result'] as const;
  let grid: string;
  if (tty) {
    const pretty = new Table({ head: [...columns], style: { head: [], border: [] } });
    for (const row of rows(report)) pretty.push(columns.map((column) => row[column]));
    grid = pretty.toString();
  } else {
    grid = table(rows(report), [...columns]);
  }
  const failed = report.scenarios.filter((scenario) => !scenario.ok);
  const lines = [
    `backend ${report.against}, sandbox ${report.sandboxUrl}`,
    `orders: ${report.orders}`,
    `evidence: ${report.evidence}`,
    `reconcile: ${report.reconcile ? `${report.reconcile.command} (${report.reconcile.ok ? report.reconcile.detail : 'failed'})` : 'not run'}`,
    '',
    grid,
  ];
  for (const scenario of failed) {
    lines.push('', `${scenario.scenario}: ${scenario.summary} (webhooks: ${scenario.delivery})`);
    for (const cause of scenario.causes) lines.push(`  - ${cause}`);
  }
  lines.push(
    '',
    failed.length === 0
      ? `all ${report.scenarios.length} scenarios held: every handler ran exactly once, nothing refused that should have been accepted or the reverse (${(report.durationMs / 1000).toFixed(1)} s)`
      : `${failed.length} of ${report.scenarios.length} scenarios failed: ${failed.map((scenario) => scenario.scenario).join(', ')}`,
  );
  return lines.join('\n');
}

/** The sandbox's port for a backend that already runs: the one its CHECKOUT_BASE_URL names. */
function sandboxPortOf(baseUrl: string | undefined): number {
  if (baseUrl === undefined) return DEFAULT_SANDBOX_PORT;
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' || !LOOPBACK_URL_HOSTS.has(url.hostname)) {
    throw new ConfigError(
      `CHECKOUT_BASE_URL is ${url.origin}, not a local sandbox: check drives the local sandbox, so configure the backend for it (or let check do it with --start "<command>").`,
    );
  }
  return url.port === '' ? 80 : Number(url.port);
}

/** `checkout-kit check`: run the scenarios against the backend and report. */
export async function check(flags: CheckFlags, io: CliIO, setExit: (code: number) => void): Promise<void> {
  const against = httpUrl('--against', flags.against);
  const checkoutUrl = !flags.checkout ? false : flags.checkoutUrl === undefined ? undefined : httpUrl('--checkout-url', flags.checkoutUrl);
  const partner = flags.partner ?? false;
  const scenarios = scenariosOf(flags.only, partner);
  const timeoutMs = duration('--timeout', 's', MAX_TIMER_MS)(flags.timeout);
  const settleMs = duration('--settle', 's', MAX_TIMER_MS)(flags.settle);
  const started = flags.start !== undefined;
  // A backend check starts gets a store and a record of this run only; one already running is read where it writes.
  const scratch = started ? await mkdtemp(join(tmpdir(), 'checkout-kit-check-')) : undefined;
  let store: Store | undefined;
  try {
    const config = started ? undefined : loadConfig({ env: io.env, cwd: io.cwd });
    if (config?.environment === 'live') throw new ConfigError('check runs against the local sandbox with test keys; this configuration has live keys.');
    const storeUrl = flags.store ?? (scratch ? `file:${join(scratch, 'store')}` : config!.store);
    const recordFile = flags.record !== undefined ? resolve(io.cwd, flags.record) : scratch ? join(scratch, 'handler-calls.jsonl') : config!.checkRecord;
    if (storeUrl === 'memory:' && recordFile === undefined) {
      throw new UsageError(
        'the backend keeps its store in memory, which check cannot read: give --record FILE (the backend records with CHECKOUT_CHECK_RECORD), or use a file: or postgres:// store.',
      );
    }
    if (partner && storeUrl === 'memory:') {
      throw new UsageError(
        "check --partner onboards its two tenants into the backend's store, which it cannot reach in memory: use a file: or postgres:// store.",
      );
    }
    if (storeUrl !== 'memory:') store = await openStore(storeUrl, { cwd: io.cwd });
    const evidence = chooseEvidence({ recordFile, store: store ? { store, description: storeUrl } : undefined });

    let childEnv: NodeJS.ProcessEnv = io.env;
    const options: CheckOptions = {
      against,
      checkoutUrl,
      sandbox: {
        dataDir: flags.data !== undefined ? resolve(io.cwd, flags.data) : scratch ? join(scratch, 'sandbox') : resolve(io.cwd, '.sandbox'),
        port: flags.sandboxPort ?? (started ? 0 : sandboxPortOf(config!.baseUrl)),
      },
      evidence,
      partner: partner && store ? { store } : undefined,
      configured: config ? { webhookSecrets: config.webhookSecrets, apiKey: config.apiKey } : undefined,
      scenarios,
      timeoutMs,
      settleMs,
      startBackend: started
        ? async (sandbox) => {
            childEnv = { ...io.env, ...backendEnv(sandbox, { store: storeUrl, record: recordFile!, against, role: partner ? 'partner' : 'merchant' }) };
            return startChild(flags.start!, { cwd: io.cwd, env: childEnv });
          }
        : undefined,
      // Read when called: by then a started backend's environment is known.
      reconcile:
        flags.reconcile === false
          ? undefined
          : () => reconcileRunner({ command: typeof flags.reconcile === 'string' ? flags.reconcile : undefined, cwd: io.cwd, env: childEnv })(),
      onProgress: !flags.json && io.stderr.isTTY ? (line) => writeLine(io.stderr, `check: ${line}`) : undefined,
    };
    const report = await runCheck(options);
    writeLine(io.stdout, flags.json ? JSON.stringify(report, null, 2) : human(report, io.stdout.isTTY === true));
    if (!report.ok) setExit(EXIT.failures);
  } finally {
    await store?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}
