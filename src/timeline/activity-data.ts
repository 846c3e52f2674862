import { z } from 'zod';

/** Timeline entry kinds the engine's recorder writes for a resource (`payment:<id>`, `invoice:<id>`). */
export const NEWS_KIND = 'news';
export const HANDLER_KIND = 'handler';

/** A piece of news the engine processed: what the service said, or why it could not be asked. */
export const NewsDataSchema = z.looseObject({
  source: z.string(),
  ok: z.boolean(),
  outcome: z.string().optional(),
  advanced: z.boolean().optional(),
  amount: z.string().optional(),
  amountReceived: z.string().optional(),
  late: z.boolean().optional(),
  error: z.string().optional(),
  ignored: z.boolean().optional(),
});
export type NewsData = z.infer<typeof NewsDataSchema>;

/** One call of the merchant's handler. */
export const HandlerDataSchema = z.looseObject({
  key: z.string(),
  outcome: z.string(),
  source: z.string(),
  attempt: z.number(),
  result: z.enum(['completed', 'retrying', 'failed']),
  error: z.string().optional(),
  durationMs: z.number(),
});
export type HandlerData = z.infer<typeof HandlerDataSchema>;

/** The timeline subject of a resource. */
export const resourceSubject = (kind: string, id: string) => `${kind}:${id}`;
