import type { Idempotency } from './idempotency.js';
import type { ResolvedOptions } from './options.js';
import type { AnyCharge, SandboxData, SandboxEvent } from './records.js';
import type { SandboxState } from './state.js';
import { buildEvent } from './webhooks/events.js';
import type { WebhookSender } from './webhooks/sender.js';

/** What every route needs. `baseUrl` is known once the server listens. */
export interface SandboxContext {
  readonly options: ResolvedOptions;
  readonly state: SandboxState;
  readonly webhooks: WebhookSender;
  readonly idempotency: Idempotency;
  baseUrl: string;
}

/** Announce a change of `record` as `<kind>.<suffix>` (the event is built from its current state). */
export type Emit = (record: AnyCharge, suffix: string) => void;

/**
 * One state change: `mutate` runs synchronously on the data (validation must happen before it
 * changes anything), then the change and its events are written together, then the events go out.
 */
export async function transact<T>(context: SandboxContext, mutate: (data: SandboxData, emit: Emit, now: Date) => T): Promise<T> {
  const now = new Date();
  const events: SandboxEvent[] = [];
  const data = context.state.data;
  const result = mutate(
    data,
    (record, suffix) => {
      const event = buildEvent(record, suffix, context.baseUrl, now);
      data.events.push(event);
      events.push(event);
    },
    now,
  );
  await context.state.commit();
  context.webhooks.dispatch(events);
  return result;
}

/** Every payment and invoice. */
export function allCharges(data: SandboxData): AnyCharge[] {
  return [...data.payments, ...data.invoices];
}
