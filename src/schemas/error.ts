import { z } from 'zod';

/** Spec 2.6: every error response is `{ error: { code, message } }`. */
export const ErrorObjectSchema = z.looseObject({
  error: z.looseObject({ code: z.string(), message: z.string() }),
});
/** The service's error body: `{ error: { code, message } }`. */
export type ErrorObject = z.infer<typeof ErrorObjectSchema>;

/** Build the spec's error object. */
export function errorObject(code: string, message: string): ErrorObject {
  return { error: { code, message } };
}
