import type { StoreSnapshot } from '../metrics/store-snapshot.js';
import type { VerificationFailures } from '../metrics/verification-log.js';
import type { Run } from '../store/index.js';
import type { AlertKind } from './alert.js';

/** What the monitor knows when it checks. */
export interface AlertContext {
  now: Date;
  snapshot: StoreSnapshot;
  /** Up to 3 runs failed for good, to name in the alert. */
  failedRuns: Run[];
  verification: VerificationFailures;
  /** Where the console is, for links (e.g. http://127.0.0.1:3000/checkout-kit). */
  consoleUrl: string | undefined;
  limits: AlertLimits;
}

export interface AlertLimits {
  backlogAgeMs: number;
  verificationFailures: number;
  verificationWindowMs: number;
}

/** A condition found: what to say about it. */
export interface Finding {
  title: string;
  details: string;
  next: string;
}

/** A rule decides from the context; the store-unwritable rule is the monitor's own (it needs no store). */
type Rule = (context: AlertContext) => Finding | undefined;

const link = (context: AlertContext, path: string, fallback: string) => (context.consoleUrl ? `${context.consoleUrl}${path}` : fallback);
const minutes = (ms: number) => Math.round(ms / 60_000);

export const RULES: Record<Exclude<AlertKind, 'store_unwritable'>, Rule> = {
  run_failed(context) {
    const { dispatch, fulfillment } = context.snapshot.summary;
    const total = dispatch.failed + fulfillment.failed;
    if (total === 0) return undefined;
    const examples = context.failedRuns.map((run) => `${run.key} (${run.attempts} attempt(s)): ${(run.lastError ?? 'no error recorded').slice(0, 200)}`);
    return {
      title: `${total} run(s) failed for good: ${fulfillment.failed} fulfillment handler run(s), ${dispatch.failed} event dispatch run(s)`,
      details: examples.length > 0 ? `For example:\n${examples.map((line) => `• ${line}`).join('\n')}` : '',
      next: `fix the cause of the errors quoted (a handler's error is in your fulfillment module; a service's refusal such as 404 not_found is not, and retrying will not change it), then click "Retry all failed" on ${link(context, '/runs?status=failed', 'the console')} or run \`checkout-kit retry --all\` (see \`checkout-kit runs --failed\`).`,
    };
  },
  dispatch_backlog(context) {
    const { dispatch } = context.snapshot.summary;
    if (dispatch.oldestQueuedAt === undefined) return undefined;
    const ageMs = context.now.getTime() - Date.parse(dispatch.oldestQueuedAt);
    if (ageMs <= context.limits.backlogAgeMs) return undefined;
    return {
      title: `${dispatch.pending + dispatch.running} stored event(s) wait for dispatch; the oldest for ${minutes(ageMs)} min (limit ${minutes(context.limits.backlogAgeMs)} min)`,
      details: 'Events are stored and acknowledged, but handlers are not keeping up or not running.',
      next: `check that \`checkout-kit serve\` is running and its log for errors, then look at ${link(context, '/events?status=pending', '`checkout-kit events list --status pending`')}; if the service is slow, raise CHECKOUT_MAX_RPS or CHECKOUT_DISPATCH_CONCURRENCY.`,
    };
  },
  missed_by_webhooks(context) {
    const pass = context.snapshot.lastPass;
    if (!pass?.ok || pass.missedByWebhooks === 0) return undefined;
    const named = pass.missed.map((resource) => `${resource.kind} ${resource.id}`).join(', ');
    return {
      title: `reconcile found ${pass.missedByWebhooks} payment(s)/invoice(s) the webhooks did not bring`,
      details: `The pass of ${pass.at} fulfilled or closed them by polling${named ? `: ${named}` : ''}. Webhooks are being lost: the service may not reach your endpoint.`,
      next: `run \`checkout-kit doctor\`, check that the service's webhook URL points at your shop's /webhooks/checkout and that CHECKOUT_WEBHOOK_SECRET matches, then see ${link(context, '/payments?learnedBy=reconcile', '`checkout-kit payments list`')}.`,
    };
  },
  verification_failures(context) {
    const { total, byReason } = context.verification;
    if (total < context.limits.verificationFailures) return undefined;
    const reasons = Object.entries(byReason)
      .sort((a, b) => b[1] - a[1])
      .map(([reason, count]) => `${reason} ×${count}`)
      .join(', ');
    return {
      title: `${total} webhook deliveries failed verification in the last ${minutes(context.limits.verificationWindowMs)} min (${reasons})`,
      details:
        'Deliveries the service signed with a secret this receiver does not know are refused and retried by the service, so fulfilment stalls until it is fixed.',
      next: `if the webhook secret was rotated, set CHECKOUT_WEBHOOK_SECRET to the new and the old secret (comma-separated) and restart serve; for timestamp_too_old, check the server's clock (NTP). \`checkout-kit doctor\` checks the configuration.`,
    };
  },
};

/** The store-unwritable alert, from the write probe's error. */
export function storeUnwritable(error: string | undefined): Finding {
  return {
    title: 'the store does not take writes',
    // The store's messages end with their own full stop.
    details: `${(error ?? 'unknown error').replace(/\.$/, '')}. Deliveries are answered 503 (the service retries them) and nothing is fulfilled meanwhile.`,
    next: 'check the disk (free space, permissions of the store folder) or the PostgreSQL server; `checkout-kit store check` checks an embedded store; `/readyz` says when it is back.',
  };
}
