import { runChild, type Command } from './child-process.js';
import { ownCli } from './own-cli.js';
import type { ReconcileRun } from './report.js';

export interface ReconcileRunnerOptions {
  /** The backend's reconcile command, a shell line. @default this CLI's `reconcile --older-than 0 --json` */
  command?: string | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** @default 60000 */
  timeoutMs?: number;
}

/** The summary line of `checkout-kit reconcile --json`, when that is what ran. */
function summary(output: string): string | undefined {
  const start = output.indexOf('{');
  if (start < 0) return undefined;
  try {
    const parsed = JSON.parse(output.slice(start, output.lastIndexOf('}') + 1)) as { checked?: number; fulfilled?: number; missedByWebhooks?: number };
    return `checked ${parsed.checked ?? '?'}, fulfilled ${parsed.fulfilled ?? '?'}, missed by webhooks ${parsed.missedByWebhooks ?? '?'}`;
  } catch {
    return undefined;
  }
}

/** Run the backend's reconcile pass once, as its cron job would (exit 0 = it worked). */
export function reconcileRunner(options: ReconcileRunnerOptions): () => Promise<ReconcileRun> {
  const command: Command = options.command ?? ownCli(['reconcile', '--older-than', '0', '--json']);
  const shown = options.command ?? 'checkout-kit reconcile --older-than 0';
  return async () => {
    const { code, output } = await runChild(command, { cwd: options.cwd, env: options.env, timeoutMs: options.timeoutMs ?? 60_000 });
    if (code === 0) return { command: shown, ok: true, detail: summary(output) ?? 'exit 0' };
    return { command: shown, ok: false, detail: `exit ${code ?? 'none'}: ${output}` };
  };
}
