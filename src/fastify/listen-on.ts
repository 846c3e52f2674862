import type { FastifyInstance } from 'fastify';
import { CheckoutKitError, ConfigError } from '../errors/index.js';

/** The port a command was told to listen on is taken: said as what to do, not as Node's `EADDRINUSE`. */
export class PortInUseError extends CheckoutKitError {
  override name = 'PortInUseError';
}

/** getaddrinfo's codes for a name that gives no address (none known, or no answer from DNS). */
const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL']);

/**
 * `app.listen`, with a port already in use reported as one line naming the address and how to
 * choose another (`choose`: the command's flag or variable, e.g. `--port or PORT`), and a host
 * nothing can listen on (`chooseHost` names where it came from) as a configuration error, not as
 * Node's `EADDRNOTAVAIL` or `getaddrinfo ENOTFOUND`.
 */
export async function listenOn(app: FastifyInstance, options: { port: number; host: string }, choose: string, chooseHost = '--host'): Promise<string> {
  try {
    return await app.listen(options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'EADDRNOTAVAIL')
      throw new ConfigError(
        `${options.host} is not an address of this machine, so nothing can listen on it: use 127.0.0.1, 0.0.0.0 (every interface) or one of this machine's addresses (${chooseHost}).`,
        { cause: error },
      );
    if (UNRESOLVED.has(code))
      throw new ConfigError(`${options.host} does not resolve to an address (${code}): give an IP address, or a name this machine resolves (${chooseHost}).`, {
        cause: error,
      });
    if (code !== 'EADDRINUSE') throw error;
    const address = options.host.includes(':') ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`;
    throw new PortInUseError(`${address} is already in use by another process: stop it, or choose another port (${choose}).`, { cause: error });
  }
}
