import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/index.js';
import { createLogger } from '../../src/log/logger.js';

/** The JSON lines a logger writes. */
function capture() {
  const destination = new PassThrough();
  let text = '';
  destination.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { destination, lines: () => text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>) };
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
});
