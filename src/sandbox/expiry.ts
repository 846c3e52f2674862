import { allCharges, transact, type SandboxContext } from './context.js';
import { applyExpiry, isExpiryDue } from './resources/charges.js';

/**
 * Expire what is due and emit `*.expired` (once per resource). Runs on a timer and before every
 * read, so a read never shows a stale status.
 */
export async function expireDue(context: SandboxContext): Promise<void> {
  const now = new Date();
  if (!allCharges(context.state.data).some((record) => isExpiryDue(record, now))) return;
  await transact(context, (data, emit, at) => {
    for (const record of allCharges(data)) {
      if (!isExpiryDue(record, at)) continue;
      applyExpiry(record, at);
      emit(record, 'expired');
    }
  });
}

/** Check for expiry every `everyMs`; returns a stop function. */
export function startExpiryTimer(context: SandboxContext, everyMs: number): () => void {
  const timer = setInterval(() => {
    expireDue(context).catch((error: unknown) => context.options.logger.error({ error: (error as Error).message }, 'sandbox expiry check failed'));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
