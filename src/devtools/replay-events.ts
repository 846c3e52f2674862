import type { Store } from '../store/types.js';
import { deliverSigned, type SignedDeliveryTarget } from './deliver-signed.js';
import { selectEvents, type EventSelection } from './select-events.js';

/**
 * @example
 * await replayEvents({ store, selection: { type: 'payment.paid' }, target: { url, secret: 'whsec_…' } });
 */
export interface ReplayOptions {
  /** The receiver's store (CHECKOUT_STORE), holding the raw bodies. */
  store: Store;
  selection: EventSelection;
  target: SignedDeliveryTarget;
  /** Called after each event, e.g. for a progress bar. */
  onResult?: (result: ReplayResult, done: number, total: number) => void;
}

export interface ReplayResult {
  id: string;
  type: string;
  /** `skipped`: the payload was pruned by retention, only the id is left. */
  outcome: 'delivered' | 'failed' | 'skipped';
  status: number | undefined;
  error: string | undefined;
}

export interface ReplayReport {
  results: ReplayResult[];
  /** Ids asked for that the store does not hold. */
  missing: string[];
  delivered: number;
  failed: number;
  skipped: number;
}

/**
 * Resend stored events, oldest first and one at a time, with the original body byte for byte and a
 * fresh signature (the `webhook-id` is the stored event id, so the receiver's dedupe still applies).
 */
export async function replayEvents(options: ReplayOptions): Promise<ReplayReport> {
  const { events, missing } = await selectEvents(options.store, options.selection);
  const results: ReplayResult[] = [];
  for (const event of events) {
    let result: ReplayResult;
    if (event.body === undefined) {
      result = { id: event.id, type: event.type, outcome: 'skipped', status: undefined, error: 'payload pruned by retention' };
    } else {
      const answer = await deliverSigned(options.target, { id: event.id, body: event.body });
      result = { id: event.id, type: event.type, outcome: answer.ok ? 'delivered' : 'failed', status: answer.status, error: answer.error };
    }
    results.push(result);
    options.onResult?.(result, results.length, events.length);
  }
  const count = (outcome: ReplayResult['outcome']) => results.filter((r) => r.outcome === outcome).length;
  return { results, missing, delivered: count('delivered'), failed: count('failed'), skipped: count('skipped') };
}
