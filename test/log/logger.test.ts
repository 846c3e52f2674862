import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError, TimeoutError } from '../../src/errors/index.js';
import { lineGate } from '../../src/log/line-gate.js';
import { createLogger } from '../../src/log/logger.js';

/** The JSON lines a logger writes. */
function capture() {
  const destination = new PassThrough();
  let text = '';
  destination.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return {
    destination,
    lines: () =>
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it("logs the service's answer (ApiError) by status, code and message, with no stack; any other error whole", () => {
    const { destination, lines } = capture();
    const logger = createLogger({ destination });
    const refused = new ApiError({ status: 401, code: 'unauthorized', message: 'bad key', operation: 'Get payment', method: 'GET', url: '/v1/payments/p1' });
    logger.warn({ id: 'p1', err: refused }, 'could not reconcile');
    logger.error({ err: new TypeError('a bug') }, 'failed');
    const [api, bug] = lines();
    expect(api!.err).toEqual({ type: 'ApiError', message: refused.message, status: 401, code: 'unauthorized', operation: 'Get payment' });
    expect(bug!.err).toMatchObject({ type: 'TypeError', message: 'a bug', stack: expect.stringContaining('TypeError: a bug') });
  });

  it('logs a service that gave no answer (NetworkError, TimeoutError) and a DOMException by name and message alone', () => {
    const { destination, lines } = capture();
    const logger = createLogger({ destination });
    const refused = new NetworkError(
      'payments.get could not reach the service (GET http://127.0.0.1:4010/v1/payments/p1): connect ECONNREFUSED 127.0.0.1:4010.',
      {
        cause: new Error('connect ECONNREFUSED 127.0.0.1:4010'),
      },
    );
    logger.warn({ err: refused }, 'could not reconcile');
    logger.warn({ err: new TimeoutError('payments.get got no answer within 15000 ms') }, 'could not reconcile');
    logger.warn({ err: new DOMException('no answer within 20000 ms', 'TimeoutError') }, 'could not confirm a return');
    expect(lines().map((line) => line.err)).toEqual([
      { type: 'NetworkError', message: refused.message },
      { type: 'TimeoutError', message: 'payments.get got no answer within 15000 ms' },
      { type: 'TimeoutError', message: 'no answer within 20000 ms' },
    ]);
  });
});

describe('log format', () => {
  const text = () => {
    const destination = new PassThrough();
    let written = '';
    destination.on('data', (chunk: Buffer) => (written += chunk.toString()));
    return { destination, written: () => written };
  };

  it('writes a line a person reads on a terminal, JSON lines elsewhere or with LOG_FORMAT=json, and refuses an unknown format', () => {
    const terminal = text();
    createLogger({ destination: terminal.destination, tty: true }).warn({ paymentId: 'pay_1', apiKey: 'svc_mk_live_should_not_show' }, 'handler failed');
    const line = terminal.written();
    expect(() => JSON.parse(line)).toThrow();
    expect(line).toMatch(/\d\d:\d\d:\d\d/);
    expect(line).toContain('WARN');
    expect(line).toContain('handler failed');
    expect(line).toContain('pay_1');
    // Redacted before it is made pretty, as in JSON.
    expect(line).not.toContain('svc_mk_live_should_not_show');

    const piped = text();
    createLogger({ destination: piped.destination }).warn({ paymentId: 'pay_1' }, 'handler failed');
    expect(JSON.parse(piped.written())).toMatchObject({ level: 40, msg: 'handler failed', paymentId: 'pay_1' });

    const forced = text();
    createLogger({ destination: forced.destination, tty: true, format: 'json' }).info('ready');
    expect(JSON.parse(forced.written())).toMatchObject({ msg: 'ready' });

    expect(() => createLogger({ destination: forced.destination, format: 'yaml' })).toThrow(/The log format "yaml" \(LOG_FORMAT\) is not one of json, pretty/);
  });

  it('writes a line above a progress bar that holds the last line, and draws the bar again', () => {
    const terminal = text();
    const gate = lineGate(terminal.destination);
    let drawn = 0;
    gate.write('before\n');
    gate.hold(() => {
      drawn += 1;
      terminal.destination.write('[bar 3/10]');
    });
    createLogger({ destination: gate, format: 'json' }).warn('slow service');
    gate.release();
    gate.write('after\n');
    expect(drawn).toBe(1);
    const written = terminal.written();
    // The bar's line is cleared, the log line written whole on it, then the bar again below.
    expect(written).toMatch(/^before\n\r\x1b\[2K\{[^\n]*"msg":"slow service"[^\n]*\}\n\[bar 3\/10\]after\n$/);
  });
});
