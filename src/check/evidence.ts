import { existsSync } from 'node:fs';
import { HANDLER_OUTCOMES, runKeys, type HandlerOutcome } from '../runs/index.js';
import type { Store } from '../store/types.js';
import { tenantOfOrderKey } from '../domain/index.js';
import { InvalidRequestError } from '../errors/index.js';
import { readHandlerCalls } from './handler-calls.js';

/** One handler call the backend made (or completed, as its store tells). */
export interface ObservedCall {
  source?: string | undefined;
  late?: boolean | undefined;
  /** Partner platforms: the tenant the call was for (`ctx.tenantId`, or the stored order's tenant). */
  tenantId?: string | undefined;
}

/** What the backend did for one payment: its handler calls by outcome, and anything worth telling. */
export interface Observed {
  calls: Record<HandlerOutcome, ObservedCall[]>;
  /** e.g. a handler that failed for good, with its error. */
  notes: string[];
}

/** Where `check` reads what the backend did. */
export interface Evidence {
  /** `record`: handler calls as the backend recorded them (counted). `store`: completed runs (at most one each). */
  kind: 'record' | 'store';
  /** For the report, e.g. `handler-call record /srv/shop/.checkout-kit/check-calls.jsonl`. */
  description: string;
  /** What the backend did for each of these payment ids (an id with nothing seen may be absent). */
  read(ids: readonly string[]): Promise<Map<string, Observed>>;
}

/** What was seen of a payment none of whose handlers ran. */
export const nothing = (): Observed => ({ calls: { paid: [], overpaid: [], underpaid: [], expired: [] }, notes: [] });

function recordEvidence(file: string): Evidence {
  return {
    kind: 'record',
    description: `handler-call record ${file}`,
    async read(ids) {
      const wanted = new Set(ids);
      const out = new Map(ids.map((id) => [id, nothing()]));
      for (const call of (await readHandlerCalls(file)) ?? []) {
        if (wanted.has(call.id)) out.get(call.id)!.calls[call.outcome].push({ source: call.source, late: call.late, tenantId: call.tenantId });
      }
      return out;
    },
  };
}

function storeEvidence(store: Store, description: string): Evidence {
  return {
    kind: 'store',
    description: `store ${description} (completed handler runs: a run that completed counts once)`,
    async read(ids) {
      const out = new Map<string, Observed>();
      for (const id of ids) {
        const observed = nothing();
        const resource = await store.getResource('payment', id);
        for (const outcome of HANDLER_OUTCOMES) {
          const run = await store.getRun(runKeys.fulfillment('payment', id, outcome));
          if (run?.status === 'done') {
            const current = resource?.outcome === outcome;
            const tenantId = resource?.orderId === undefined ? undefined : tenantOfOrderKey(resource.orderId);
            observed.calls[outcome].push({ source: current ? resource.outcomeSource : undefined, late: current ? resource.late : undefined, tenantId });
          } else if (run?.status === 'failed') observed.notes.push(`its ${outcome} handler failed for good: ${run.lastError ?? 'no error kept'}`);
          else if (run && run.attempts > 0) observed.notes.push(`its ${outcome} handler threw and awaits a retry: ${run.lastError ?? 'no error kept'}`);
        }
        out.set(id, observed);
      }
      return out;
    },
  };
}

/**
 * The record of handler calls when the backend keeps one (the file exists), else its store. The
 * record counts every call; the store can only tell a run completed, so a handler run twice by a
 * backend that does not use checkout-kit's engine shows only in the record.
 */
export function chooseEvidence(sources: { recordFile?: string | undefined; store?: { store: Store; description: string } | undefined }): Evidence {
  const record = sources.recordFile === undefined ? undefined : recordEvidence(sources.recordFile);
  const stored = sources.store === undefined ? undefined : storeEvidence(sources.store.store, sources.store.description);
  if (!record && !stored) throw new InvalidRequestError('check needs evidence of what the backend did: a handler-call record file, or its store.');
  if (!record) return stored!;
  if (!stored) return record;
  // Decided at each read: the record file appears with the backend's first handler call.
  return {
    get kind() {
      return existsSync(sources.recordFile!) ? 'record' : 'store';
    },
    get description() {
      return existsSync(sources.recordFile!) ? record.description : `${stored.description}; no handler-call record at ${sources.recordFile}`;
    },
    async read(ids) {
      if (!existsSync(sources.recordFile!)) return stored.read(ids);
      // The record counts the calls; the store still knows why a handler that never completed did not (it threw).
      const [calls, runs] = await Promise.all([record.read(ids), stored.read(ids)]);
      for (const [id, observed] of calls) observed.notes.push(...(runs.get(id)?.notes ?? []));
      return calls;
    },
  };
}
