import { ConfigError } from './errors.js';

/**
 * checkout-kit's optional peer dependencies that it imports itself, each with the install command
 * for the major its `peerDependencies` accept: fastify for what serves HTTP (serve, console,
 * capture, demo, the sandbox), tsx for a fulfillment module written in TypeScript.
 */
export const OPTIONAL_PEERS = { fastify: 'npm install fastify@5', tsx: 'npm install tsx@4' } as const;

export type OptionalPeer = keyof typeof OPTIONAL_PEERS;

/** An optional peer that something was about to use is not installed; the message says how to install it. */
export class MissingPeerError extends ConfigError {
  override name = 'MissingPeerError';
  constructor(
    readonly peer: OptionalPeer,
    neededBy: string,
    options?: { cause?: unknown },
  ) {
    super(`${neededBy} needs ${peer}, an optional peer dependency of checkout-kit that is not installed: ${OPTIONAL_PEERS[peer]}`, options);
  }
}

/**
 * `load()`, the import of `peer` or of a module that imports it, or a `MissingPeerError` whose first
 * line says what needs the peer and how to install it: Node's own error ("Cannot find package
 * 'fastify' imported from …/node_modules/checkout-kit/dist/…") says neither.
 *
 * @example const { default: Fastify } = await importOptionalPeer('fastify', 'checkout-kit serve', () => import('fastify'));
 */
export async function importOptionalPeer<T>(peer: OptionalPeer, neededBy: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!isMissingPackage(error, peer)) throw error;
    throw new MissingPeerError(peer, neededBy, { cause: error });
  }
}

/** Node could not find `name` itself, not a package that `name` imports. */
function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' && typeof message === 'string' && message.includes(`Cannot find package '${name}' `);
}
