import cliProgress from 'cli-progress';
import { reconcile, type ReconcileSummary } from '../../reconcile/index.js';
import { LIST_FAILED_RUNS } from '../defaults.js';
import { EXIT } from '../exit.js';
import { output, table, type CliIO } from '../io.js';
import { duration, wholeNumber } from '../flags.js';
import { openRuntime } from '../runtime.js';

export interface ReconcileFlags {
  json?: boolean;
  olderThan: string;
  concurrency: string;
}

function human(summary: ReconcileSummary): string {
  if (summary.skipped) return 'another reconcile pass is running on this store; nothing done';
  const lines = [
    table(
      [
        {
          checked: summary.checked,
          advanced: summary.advanced,
          fulfilled: summary.fulfilled,
          'missed by webhooks': summary.missedByWebhooks,
          discovered: summary.discovered,
          retried: summary.retried,
          failed: summary.failed,
          'awaiting retry': summary.awaitingRetry,
        },
      ],
      ['checked', 'advanced', 'fulfilled', 'missed by webhooks', 'discovered', 'retried', 'failed', 'awaiting retry'],
    ),
  ];
  for (const error of summary.errors.slice(0, 20)) lines.push(`error: ${error.kind} ${error.id}: ${error.error}`);
  if (summary.deferred > 0)
    lines.push(
      `${summary.deferred} open payment(s) left for the next pass: one merchant's share of a pass is bounded (perMerchant), so that every tenant is polled`,
    );
  if (summary.unknownToService > 0)
    lines.push(`${summary.unknownToService} resource(s) the service does not know (404): closed, so reconcile stops asking (see the log for which)`);
  if (summary.awaitingRetry > 0)
    lines.push(`${summary.awaitingRetry} handler run(s) failed for good: see \`${LIST_FAILED_RUNS}\`, then \`checkout-kit retry --all\``);
  return lines.join('\n');
}

/** `checkout-kit reconcile`: one pass; exit 1 when a handler failed or waits for a retry. */
export async function reconcileOnce(options: ReconcileFlags, io: CliIO, setExit: (code: number) => void): Promise<void> {
  const olderThanMs = duration('--older-than')(options.olderThan);
  const concurrency = wholeNumber('--concurrency', { min: 1, max: 256 })(options.concurrency);
  const runtime = await openRuntime(io, {
    handlers: true,
    requireService:
      'reconcile needs CHECKOUT_BASE_URL and CHECKOUT_API_KEY/CHECKOUT_SIGNING_SECRET (and CHECKOUT_INVOICE_KEY for invoices), or for a partner platform CHECKOUT_PARTNER_API_KEY/CHECKOUT_PARTNER_SIGNING_SECRET',
  });
  // A merchant's client lists its invoices; a partner platform has payments only (each read with the partner's key).
  const client = runtime.client;
  const bar =
    !options.json && io.stderr.isTTY
      ? new cliProgress.SingleBar({ stream: io.stderr, format: 'reconcile [{bar}] {value}/{total}', forceRedraw: true }, cliProgress.Presets.shades_classic)
      : undefined;
  try {
    const summary = await reconcile({
      store: runtime.store,
      engine: runtime.engine,
      listInvoices: client && runtime.config.invoiceKey ? () => client.invoices.list() : undefined,
      environment: runtime.config.environment,
      olderThanMs,
      concurrency,
      logger: runtime.logger,
      onProgress: bar
        ? (done, total) => {
            if (done === 0) {
              bar.start(total, 0);
              // A log line while the bar runs is written above it, and the bar drawn again.
              runtime.logs.hold(() => bar.render());
            } else bar.update(done);
          }
        : undefined,
    });
    runtime.logs.release();
    bar?.stop();
    output(io, options.json ?? false, summary, human);
    if (summary.failed > 0 || summary.awaitingRetry > 0) setExit(EXIT.failures);
  } finally {
    runtime.logs.release();
    bar?.stop();
    await runtime.close();
  }
}
