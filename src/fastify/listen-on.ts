import type { FastifyInstance } from 'fastify';
import { CheckoutKitError } from '../errors/index.js';

/** The port a command was told to listen on is taken: said as what to do, not as Node's `EADDRINUSE`. */
export class PortInUseError extends CheckoutKitError {
  override name = 'PortInUseError';
}

/**
 * `app.listen`, with a port already in use reported as one line naming the address and how to
 * choose another (`choose`: the command's flag or variable, e.g. `--port or PORT`).
 */
export async function listenOn(app: FastifyInstance, options: { port: number; host: string }, choose: string): Promise<string> {
  try {
    return await app.listen(options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    const address = options.host.includes(':') ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`;
    throw new PortInUseError(`${address} is already in use by another process: stop it, or choose another port (${choose}).`, { cause: error });
  }
}
