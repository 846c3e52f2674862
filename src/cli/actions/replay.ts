import cliProgress from 'cli-progress';
import { loadConfig } from '../../config/index.js';
import { replayEvents, type EventSelection, type ReplayReport } from '../../devtools/index.js';
import { openStore } from '../../store/open.js';
import { keyFormOf } from '../../webhooks/schemes/registry.js';
import { EXIT, notInStore, UsageError } from '../exit.js';
import { output, table, writeLine, type CliIO } from '../io.js';
import { httpUrl, signingSecret, sinceTime } from '../flags.js';

export interface ReplayFlags {
  to: string;
  event: string[];
  since?: string;
  type?: string;
  all?: boolean;
  secret?: string;
  json?: boolean;
}

function selectionOf(flags: ReplayFlags): EventSelection {
  const filters = flags.since !== undefined || flags.type !== undefined;
  if (flags.event.length > 0) {
    if (filters || flags.all) throw new UsageError('--event names the events itself: drop --since, --type and --all, or drop --event.');
    return { ids: flags.event };
  }
  if (flags.all) {
    if (filters) throw new UsageError('--all replays every stored event: drop --since and --type, or drop --all.');
    return {};
  }
  if (!filters) throw new UsageError('say which events to replay: --event ID, --since TIME, --type TYPE, or --all.');
  return { since: flags.since === undefined ? undefined : sinceTime('--since')(flags.since), type: flags.type };
}

function human(report: ReplayReport): string {
  const rows = report.results.map((r) => ({
    id: r.id,
    type: r.type,
    status: r.status ?? '-',
    result: r.error && r.outcome !== 'delivered' ? `${r.outcome}: ${r.error}` : r.outcome,
  }));
  const summary = `${report.delivered} delivered, ${report.failed} failed, ${report.skipped} skipped`;
  return report.results.length ? `${table(rows, ['id', 'type', 'status', 'result'])}\n${summary}` : 'no stored events match';
}

/** `checkout-kit replay`: resend the selected stored events; exit 1 when one failed, 2 when one is not stored. */
export async function replay(flags: ReplayFlags, io: CliIO, setExit: (code: number) => void): Promise<void> {
  const url = httpUrl('--to', flags.to);
  const selection = selectionOf(flags);
  const config = loadConfig({ env: io.env, cwd: io.cwd });
  const secret = signingSecret(flags.secret, config.webhookSecrets, keyFormOf(config.webhookScheme) === 'whsec-base64');
  const bar =
    !flags.json && io.stderr.isTTY
      ? new cliProgress.SingleBar({ stream: io.stderr, format: 'replay [{bar}] {value}/{total}' }, cliProgress.Presets.shades_classic)
      : undefined;
  // Only what is stored can be replayed: a store that does not exist is refused, not created.
  const store = await openStore(config.store, { cwd: io.cwd, mustExist: true });
  let report: ReplayReport;
  try {
    report = await replayEvents({
      store,
      selection,
      target: { url, secret, scheme: config.webhookScheme },
      onResult: bar ? (_result, done, total) => (done === 1 ? bar.start(total, 1) : bar.update(done)) : undefined,
    });
  } finally {
    bar?.stop();
    await store.close();
  }
  // The events found are sent all the same: a receiver acknowledges a replayed event it has.
  for (const id of report.missing) writeLine(io.stderr, `checkout-kit: ${notInStore('event', id, '`checkout-kit events list`').message}`);
  // Every event named is missing: the lines above say so, and nothing was sent to report on.
  if (flags.json || report.results.length > 0 || report.missing.length === 0) output(io, flags.json ?? false, report, human);
  if (report.failed > 0) setExit(EXIT.failures);
  if (report.missing.length > 0) setExit(EXIT.usage);
}
