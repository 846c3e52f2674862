import { describe, expect, it } from 'vitest';
import { answerErrorOf, describeAnswer } from '../../../src/webhooks/receive/receiver-answer.js';

describe('a receiver answer', () => {
  it("reads the spec's error object as it is, else the first 200 characters of the body, else nothing", () => {
    expect(answerErrorOf('{"error":{"code":"invalid_signature","message":"No matching signature."}}')).toEqual({
      code: 'invalid_signature',
      message: 'No matching signature.',
    });
    expect(answerErrorOf('<html><body>Cannot POST /webhooks</body></html>\n')).toEqual({ message: '<html><body>Cannot POST /webhooks</body></html>' });
    const long = 'x'.repeat(500);
    expect(answerErrorOf(long)).toEqual({ message: `${'x'.repeat(200)}…` });
    // JSON that is not the error object is shown as text.
    expect(answerErrorOf('{"ok":false}')).toEqual({ message: '{"ok":false}' });
    expect(answerErrorOf('  ')).toBeUndefined();
  });

  it("keeps an error page's start on one line: its line breaks and indentation are one space each", () => {
    const page = '<!DOCTYPE HTML>\n<html lang="en">\n    <head>\n        <title>Error response</title>\n    </head>\n</html>\n';
    expect(answerErrorOf(page)).toEqual({ message: '<!DOCTYPE HTML> <html lang="en"> <head> <title>Error response</title> </head> </html>' });
    expect(describeAnswer({ status: 501, ...answerErrorOf(page) })).not.toMatch(/\n/);
    expect(describeAnswer({ status: 400, code: 'invalid_event', message: 'bad\r\n  event' })).toBe('answered 400: invalid_event — bad event');
  });

  it('is described in one line: status, code — message; a body without code; a 2xx; no answer', () => {
    expect(describeAnswer({ status: 401, code: 'invalid_signature', message: 'No matching signature.' })).toBe(
      'answered 401: invalid_signature — No matching signature.',
    );
    expect(describeAnswer({ status: 502, message: 'Bad gateway' })).toBe('answered 502: Bad gateway');
    expect(describeAnswer({ status: 500 })).toBe('answered 500');
    expect(describeAnswer({ status: 204 })).toBe('answered 204');
    expect(describeAnswer({ status: undefined, message: 'connect ECONNREFUSED 127.0.0.1:9' })).toBe('no answer (connect ECONNREFUSED 127.0.0.1:9)');
    expect(describeAnswer({ status: 400, code: 'x', message: 'y'.repeat(700) })).toBe(`answered 400: x — ${'y'.repeat(600)}…`);
  });
});
