import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { HANDLER_OUTCOMES, RESOURCE_KINDS, type HandlerOutcome } from '../runs/index.js';
import type { ResourceKind } from '../store/types.js';

const HandlerOutcomeSchema = z.enum(HANDLER_OUTCOMES as [HandlerOutcome, ...HandlerOutcome[]]);

/**
 * One line of the handler-call record (JSON lines) that `checkout-kit check` reads: a handler that
 * returned, for one resource and outcome. Unknown fields are kept, so a backend may add its own.
 */
export const HandlerCallSchema = z.looseObject({
  /** When the handler returned (ISO time). */
  at: z.string(),
  kind: z.enum(RESOURCE_KINDS as [ResourceKind, ...ResourceKind[]]),
  /** The payment or invoice id. */
  id: z.string(),
  outcome: HandlerOutcomeSchema,
  /** Which handler ran (`paid` stands in for a missing `overpaid`). @default the outcome */
  handler: HandlerOutcomeSchema.optional(),
  /** `ctx.key`. */
  key: z.string().optional(),
  /** How the news came: webhook, reconcile, return. */
  source: z.string().optional(),
  /** `ctx.late`, when the backend knows it. */
  late: z.boolean().optional(),
  referenceId: z.string().optional(),
  /** Partner platforms: `ctx.tenantId`. */
  tenantId: z.string().optional(),
});
/** One line of the handler-call record: a handler that returned, for one resource and outcome. */
export type HandlerCall = z.infer<typeof HandlerCallSchema>;

/**
 * Append one call to the record. One `appendFile` per line (O_APPEND): lines from several
 * processes (the server, a reconcile job) never interleave.
 * @example await appendHandlerCall(file, { at: new Date().toISOString(), kind: 'payment', id, outcome: 'paid' })
 */
export async function appendHandlerCall(file: string, call: HandlerCall): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${JSON.stringify(HandlerCallSchema.parse(call))}\n`, 'utf8');
}

/** Every call in the record, oldest first; `undefined` when there is no record file. A torn or foreign line is skipped. */
export async function readHandlerCalls(file: string): Promise<HandlerCall[] | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const calls: HandlerCall[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = HandlerCallSchema.safeParse(JSON.parse(line));
      if (parsed.success) calls.push(parsed.data);
    } catch {
      // A line cut by a crash mid-write.
    }
  }
  return calls;
}
