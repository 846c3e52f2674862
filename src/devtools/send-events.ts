import { deliverSigned, type DeliveryResult, type SignedDeliveryInput, type SignedDeliveryTarget } from './deliver-signed.js';

export interface SendEventsOptions {
  /** Send each event this many times (same id, same body). @default 1 */
  copies?: number;
  /** Send everything at once, as a duplicate storm; otherwise one at a time, in order. @default false */
  concurrent?: boolean;
}

export interface SendReport {
  url: string;
  sent: number;
  /** 2xx answers. */
  delivered: number;
  failed: number;
  /** How many answers of each kind: the status of a 2xx, else the answer in one line (`describeAnswer`). */
  answers: Record<string, number>;
}

/** Deliver events, freshly signed, to one URL; tally the answers. */
export async function sendEvents(events: readonly SignedDeliveryInput[], target: SignedDeliveryTarget, options: SendEventsOptions = {}): Promise<SendReport> {
  const copies = options.copies ?? 1;
  const queue = events.flatMap((event) => Array.from({ length: copies }, () => event));
  let results: DeliveryResult[] = [];
  if (options.concurrent) results = await Promise.all(queue.map((event) => deliverSigned(target, event)));
  else for (const event of queue) results.push(await deliverSigned(target, event));
  const answers: Record<string, number> = {};
  for (const result of results) {
    const key = result.ok ? String(result.status) : (result.error ?? 'error');
    answers[key] = (answers[key] ?? 0) + 1;
  }
  const delivered = results.filter((result) => result.ok).length;
  return { url: target.url, sent: results.length, delivered, failed: results.length - delivered, answers };
}
