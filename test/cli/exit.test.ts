import { describe, expect, it } from 'vitest';
import { formatError, UsageError } from '../../src/cli/exit.js';

describe('formatError', () => {
  const error = new UsageError('refused "evt_\u202egnp.exe"\u001b[2J\nsecond line');

  it('prints the first line of the message, its control characters escaped', () => {
    expect(formatError(error, false)).toBe('checkout-kit: refused "evt_\\u202egnp.exe"\\u001b[2J');
  });

  it('with --verbose prints the whole stack: its lines stay lines, its control characters are escaped', () => {
    const printed = formatError(error, true);
    expect(printed).toMatch(/^checkout-kit: UsageError: refused "evt_\\u202egnp\.exe"\\u001b\[2J\nsecond line\n\s+at /);
    expect(printed).not.toMatch(/[\u001b\u202e]/);
  });

  it('prints what is thrown that is not an Error as text, escaped', () => {
    expect(formatError('bad\u001b[31m', false)).toBe('checkout-kit: bad\\u001b[31m');
  });
});
