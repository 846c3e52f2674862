import type { WebhookVerificationError } from '../../errors/index.js';
import type { Logger } from '../../log/logger.js';
import type { Store } from '../../store/types.js';
import type { HeaderBag } from '../verify/header-value.js';
import { plainHeaders } from '../receive/plain-headers.js';
import { verificationFailure, type WebhookResult } from '../receive/responses.js';
import { utf8Bytes, utf8Lenient } from '../verify/utf8.js';
import type { Doctor } from './create-doctor.js';
import { DAMAGES } from './damages.js';
import { describeDiagnosis, type Diagnosis } from './diagnosis.js';

/** How much of a refused body a dead letter keeps: enough to see the damage, too little to fill the store. */
export const KEPT_BODY_BYTES = 2048;

export interface RejectionContext {
  doctor: Doctor | undefined;
  store: Pick<Store, 'insertDeadLetter'>;
  logger: Logger;
  clock: () => Date;
}

/** The refusal, and what to add to its log line. */
export interface ExplainedRejection {
  result: WebhookResult;
  details: Record<string, unknown>;
}

function keptBody(body: Uint8Array): string {
  if (body.byteLength <= KEPT_BODY_BYTES) return utf8Lenient(body);
  return `${utf8Lenient(body.subarray(0, KEPT_BODY_BYTES))}… [cut at ${KEPT_BODY_BYTES} of ${body.byteLength} bytes]`;
}

function titleOf(diagnosis: Diagnosis): string {
  const title = diagnosis.cause === 'unknown' ? 'no known damage' : DAMAGES[diagnosis.cause].title;
  return diagnosis.certain || diagnosis.cause === 'unknown' ? title : `probably ${title}`;
}

/**
 * A delivery that failed verification, explained by the doctor when it may: the diagnosis goes to
 * the log and a dead letter, and in development mode into the 401 message. The answer's status and
 * code never change: the doctor explains a refusal, it never reverses one. (No Node built-ins here:
 * the Web receiver shares this file, without a doctor.)
 */
export async function explainRejection(
  context: RejectionContext,
  headers: HeaderBag,
  body: Uint8Array | string,
  error: WebhookVerificationError,
): Promise<ExplainedRejection> {
  const refused = verificationFailure(error);
  const diagnosis = context.doctor?.explain({ headers, body, reason: error.reason });
  if (!context.doctor || !diagnosis) return { result: refused, details: { reason: error.reason } };

  const { code, message } = (refused.body as { error: { code: string; message: string } }).error;
  const explanation = describeDiagnosis(diagnosis);
  if (context.doctor.deadLetters) {
    try {
      const now = context.clock();
      const bytes = typeof body === 'string' ? utf8Bytes(body) : body;
      await context.store.insertDeadLetter(
        { receivedAt: now.toISOString(), reason: `${code} (${titleOf(diagnosis)}): ${explanation}`, body: keptBody(bytes), headers: plainHeaders(headers) },
        now,
      );
    } catch (storeError) {
      context.logger.error({ err: String(storeError) }, `Could not keep the refused delivery as a dead letter: ${String(storeError)}`);
    }
  }
  const result = context.doctor.development ? { ...refused, body: { error: { code, message: `${message} ${explanation}` } } } : refused;
  return {
    result,
    details: { reason: error.reason, cause: diagnosis.cause, certain: diagnosis.certain, framework: diagnosis.framework, diagnosis: explanation },
  };
}
