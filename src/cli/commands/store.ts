import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { checkStore, recoverStore, type RecoveryAction, type StoreCheckReport, type StoreRecoverResult } from '../../store/embedded/index.js';
import { formatBytes } from '../../store/embedded/check.js';
import { fileStoreDir } from '../../store/open.js';
import { EXIT, UsageError } from '../exit.js';
import { output, type CliIO } from '../io.js';
import type { Register } from '../register.js';

/**
 * The embedded store's folder: `--dir`, else CHECKOUT_STORE's `file:` folder. Other stores are a
 * usage error: PostgreSQL keeps its own integrity (its tools and backups apply there).
 */
function storeDir(io: CliIO, dir: string | undefined, command: string): string {
  if (dir !== undefined) return resolve(io.cwd, dir);
  const url = loadConfig({ env: io.env, cwd: io.cwd }).store;
  if (url.startsWith('file:')) return fileStoreDir(url, io.cwd);
  // Only the scheme: a store URL may carry credentials.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? 'that';
  const why = /^postgres(ql)?:$/.test(scheme)
    ? 'PostgreSQL keeps its own integrity (write-ahead log, constraints): check it with its tools (pg_amcheck) and restore from its backups'
    : 'it keeps nothing on disk';
  throw new UsageError(`store ${command} is for the embedded store (CHECKOUT_STORE=file:<dir>), not applicable to a ${scheme} store: ${why}.`);
}

function checkText(report: StoreCheckReport): string {
  const verdict = { healthy: 'healthy', warnings: 'healthy, with warnings', damaged: report.opens ? 'DAMAGED (it opens, without data it had)' : 'DAMAGED (it will not open)' }[report.status];
  const lines = [`store ${report.dir}: ${verdict}`];
  const { snapshot } = report;
  const snapshotLine = !snapshot.present ? 'none' : snapshot.ok ? `ok, generation ${snapshot.generation}, ${snapshot.events} event(s), ${formatBytes(snapshot.bytes)}` : `damaged, ${formatBytes(snapshot.bytes)}`;
  lines.push(`  ${snapshot.file.padEnd(18)} ${snapshotLine}`);
  for (const segment of report.segments) {
    const parts = [segment.role, `${segment.lines} line(s)`, formatBytes(segment.bytes)];
    if (segment.damagedLines > 0) parts.push(`${segment.damagedLines} damaged`);
    if (segment.tornBytes > 0) parts.push(`${segment.tornBytes} torn byte(s) at the end`);
    if (segment.bodies > 0) parts.push(`bodies of ${segment.bodies} event(s)`);
    lines.push(`  ${segment.file.padEnd(18)} ${parts.join(', ')}`);
  }
  for (const problem of report.problems) lines.push(`${problem.severity}: ${problem.message}`);
  const plan = report.recovery;
  if (plan.refusal) lines.push(`recover: not possible without losing data: ${plan.refusal}`);
  else if (plan.needed) lines.push(`recover: \`checkout-kit store recover\` would ${plan.actions.map(actionText).join('; ')}. ${consequences(plan.keptEvents, plan.dropped)}`);
  return lines.join('\n');
}

function actionText(action: RecoveryAction): string {
  if (action.kind === 'truncate') return `cut ${action.file} from ${formatBytes(action.fromBytes)} to ${formatBytes(action.toBytes)} (${action.reason})`;
  if (action.kind === 'rewrite-snapshot') return `rewrite ${action.file} at generation ${action.generation} (${action.reason})`;
  return `set ${action.file} aside (${action.reason})`;
}

function consequences(kept: number, dropped: StoreRecoverResult['dropped']): string {
  const parts = [`Keeps ${kept} event(s)`];
  if (dropped.lines > 0 || dropped.bytes > 0) {
    const events = dropped.events > 0 ? ` holding ${dropped.events} event(s) (${dropped.eventIds.slice(0, 5).join(', ')}${dropped.events > 5 ? ', …' : ''}: acknowledged deliveries, so ask the sender to resend them; \`checkout-kit reconcile\` catches up on their payments)` : '';
    parts.push(`drops ${dropped.lines} line(s), ${formatBytes(dropped.bytes)}${events}`);
  }
  if (dropped.completions > 0) {
    const keys = `${dropped.completionKeys.slice(0, 5).join(', ')}${dropped.completions > 5 ? ', …' : ''}`;
    parts.push(`${dropped.completions} handler run(s) lose their completion (${keys}): the store will hold them as not done, and serve or reconcile calls those handlers again with the same ctx.key; check whether each already ran before you start serve or reconcile again (up to 50 keys are in the backup's recovery.json)`);
  }
  if (dropped.payloads > 0) parts.push(`${dropped.payloads} event(s) lose their raw body (${dropped.payloadIds.slice(0, 5).join(', ')}${dropped.payloads > 5 ? ', …' : ''})`);
  return `${parts.join('; ')}.`;
}

function recoverText(result: StoreRecoverResult): string {
  const { before } = result;
  if (!before.recovery.needed) {
    const note = before.status === 'healthy' ? 'healthy' : `nothing to change (${before.problems.map((p) => p.message).join(' ')})`;
    return `store ${result.dir}: ${note}; no file was changed`;
  }
  const verb = result.dryRun ? 'would' : 'did';
  const lines = [`store ${result.dir}: ${result.dryRun ? 'recovery plan (dry run, nothing changed)' : 'recovered'}`];
  for (const problem of before.problems) lines.push(`was: ${problem.message}`);
  for (const action of result.actions) lines.push(`${verb}: ${actionText(action)}`);
  lines.push(consequences(result.keptEvents, result.dropped));
  if (result.backup) lines.push(`copy of every changed file: ${result.backup}`);
  if (!result.dryRun) lines.push(result.opens ? 'the store opens again' : 'the store still does not open: see `checkout-kit store check`');
  return lines.join('\n');
}

/** `checkout-kit store check|recover`: what is damaged in the embedded store, and back to its last good state. */
export const registerStore: Register = (program, io, setExit) => {
  const store = program.command('store').description('check the embedded store files, and recover a damaged one');
  store
    .command('check')
    .description('report damaged files and lines (exit 1 when damaged)')
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (options: { dir?: string; json?: boolean }) => {
      const report = await checkStore(storeDir(io, options.dir, 'check'));
      output(io, options.json ?? false, report, checkText);
      if (report.status === 'damaged') setExit(EXIT.failures);
    });
  store
    .command('recover')
    .description('bring a damaged store back to its last good state, keeping a copy of every changed file (stop serve first)')
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--dry-run', 'show what would change, change nothing')
    .option('--json', 'JSON output')
    .action(async (options: { dir?: string; dryRun?: boolean; json?: boolean }) => {
      const result = await recoverStore(storeDir(io, options.dir, 'recover'), { dryRun: options.dryRun ?? false });
      output(io, options.json ?? false, result, recoverText);
      if (!result.dryRun && result.changed && !result.opens) setExit(EXIT.failures);
    });
};
