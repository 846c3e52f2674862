import { describe, expect, it } from 'vitest';
import { describeFetchError } from '../../src/errors/index.js';
import { freePort } from '../support/ports.js';

const failureOf = (url: string) =>
  fetch(url, { method: 'POST', body: '{}' }).then(
    () => expect.unreachable(),
    (error: unknown) => error,
  );

describe('describeFetchError', () => {
  it('names the network reason instead of undici\'s "fetch failed"', async () => {
    const url = `http://127.0.0.1:${await freePort()}/hook`;
    expect(describeFetchError(await failureOf(url), url)).toBe('ECONNREFUSED');
  });

  it('says what to do about a port fetch refuses to connect to', async () => {
    // Refused before any connection: nothing needs to listen on 6000.
    const error = await failureOf('http://127.0.0.1:6000/hook');
    expect(describeFetchError(error, 'http://127.0.0.1:6000/hook')).toBe(
      'fetch refuses to connect to http://127.0.0.1:6000/hook (or an address it redirected to): its port is one of the Fetch standard\'s "bad ports" (e.g. 6000, 6665-6669, 10080); let the server listen on another port',
    );
    expect(describeFetchError(error)).toMatch(/^fetch refuses to connect to the address: .*another port$/);
  });

  it("falls back to the error's own message", () => {
    expect(describeFetchError(new Error('something else'))).toBe('something else');
  });
});
