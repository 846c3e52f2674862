import { describe, expect, it } from 'vitest';
import { ConfigError, importOptionalPeer, MissingPeerError } from '../../src/errors/index.js';

/** Node's error for an import of a package that is not installed, as `import()` rejects with it. */
const notFound = (name: string) =>
  Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/checkout-kit/dist/cli/serve-app.js`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });

describe('importOptionalPeer', () => {
  it('gives what the import gives when the peer is installed', async () => {
    const fastify = { default: () => 'app' };
    await expect(importOptionalPeer('fastify', 'checkout-kit serve', async () => fastify)).resolves.toBe(fastify);
  });

  it('a missing peer: one line saying what needs it and the command that installs it, a ConfigError with the cause kept', async () => {
    const cause = notFound('fastify');
    const error = await importOptionalPeer('fastify', 'checkout-kit serve', () => Promise.reject(cause)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingPeerError);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as MissingPeerError).message).toBe(
      'checkout-kit serve needs fastify, an optional peer dependency of checkout-kit that is not installed: npm install fastify@5',
    );
    expect((error as MissingPeerError).peer).toBe('fastify');
    expect((error as MissingPeerError).cause).toBe(cause);
  });

  it('tsx, imported through its subpath, gets its own command', async () => {
    const error = await importOptionalPeer('tsx', 'The TypeScript fulfillment module /app/fulfillment.ts', () => Promise.reject(notFound('tsx'))).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe(
      'The TypeScript fulfillment module /app/fulfillment.ts needs tsx, an optional peer dependency of checkout-kit that is not installed: npm install tsx@4',
    );
  });

  it('a package the peer itself imports is missing, or the peer fails otherwise: the error is passed on as it is', async () => {
    for (const cause of [
      notFound('light-my-request'),
      notFound('fastify-plugin'),
      new SyntaxError('Unexpected token'),
      Object.assign(new Error('Cannot find package'), { code: 'ERR_MODULE_NOT_FOUND' }),
    ]) {
      await expect(importOptionalPeer('fastify', 'checkout-kit serve', () => Promise.reject(cause))).rejects.toBe(cause);
    }
  });
});
