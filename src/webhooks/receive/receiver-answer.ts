import { ErrorObjectSchema } from '../../schemas/error.js';

/** How much of an answer that is not the spec's error object is kept: enough to recognise an error page. */
const EXCERPT_CHARS = 200;

/** How much of a message a one-line description keeps. */
const MESSAGE_CHARS = 600;

/** What a webhook receiver's refusal said: the spec's error object, or the start of any other body. */
export interface AnswerError {
  /** The error object's `code`; none for a body that is not one. */
  code?: string;
  message: string;
}

/** A receiver's answer to one delivery: its status (none when no answer came) and what it said, or why no answer came. */
export interface ReceiverAnswer {
  status: number | undefined;
  code?: string | undefined;
  message?: string | undefined;
}

/**
 * What an answer's body says: the spec's error object (`{ error: { code, message } }`) as it is,
 * else the body's first 200 characters, its whitespace runs made one space; none for an empty body.
 */
export function answerErrorOf(text: string): AnswerError | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const object = ErrorObjectSchema.safeParse(parsed);
  if (object.success) return { code: object.data.error.code, message: object.data.error.message };
  // One line: an error page's line breaks and indentation would spill over the report.
  const body = oneLine(text);
  if (body === '') return undefined;
  return { message: body.length > EXCERPT_CHARS ? `${body.slice(0, EXCERPT_CHARS)}…` : body };
}

/**
 * A receiver's answer in one line, as the sandbox logs it and trigger, replay and check print it:
 * `answered 401: signature_invalid — The signature does not match…`, `answered 502: <body start>`,
 * `answered 200`, or `no answer (<why>)`.
 */
export function describeAnswer(answer: ReceiverAnswer): string {
  const whole = answer.message === undefined ? undefined : oneLine(answer.message);
  const message = whole && whole.length > MESSAGE_CHARS ? `${whole.slice(0, MESSAGE_CHARS)}…` : whole;
  if (answer.status === undefined) return `no answer${message ? ` (${message})` : ''}`;
  const said = answer.code ? `${answer.code}${message ? ` — ${message}` : ''}` : message;
  return `answered ${answer.status}${said ? `: ${said}` : ''}`;
}

/** `text` with every run of whitespace, line breaks included, made one space. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
