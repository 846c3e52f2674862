import { loadFastify } from '../../fastify/load-fastify.js';
import { isLoopbackHost } from '../../access/index.js';
import { loadConfig } from '../../config/index.js';
import { ConfigError } from '../../errors/index.js';
import { notFoundReply, SPEC_ERROR_OPTIONS, specErrorHandler } from '../../fastify/error-replies.js';
import { consoleAccess } from '../console-access.js';
import { DEFAULT_CONSOLE_PORT } from '../defaults.js';
import { UsageError } from '../exit.js';
import { writeLine, type CliIO } from '../io.js';
import { CONSOLE_PREFIX, createOperations } from '../operations.js';
import { openRuntime } from '../runtime.js';
import { listenOn } from '../../fastify/listen-on.js';
import { untilSignal } from '../signals.js';

export interface ConsoleFlags {
  port?: number;
  host: string;
  handlers?: string;
}

/** `checkout-kit console`: serve the operator console until SIGINT/SIGTERM. */
export async function runConsole(options: ConsoleFlags, io: CliIO): Promise<void> {
  // Listening for signals before the listening line: a supervisor may send SIGTERM as soon as it reads it.
  const stopped = untilSignal();
  const port = options.port ?? DEFAULT_CONSOLE_PORT;
  const loopback = isLoopbackHost(options.host);
  if (!loopback && loadConfig({ env: io.env, cwd: io.cwd }).consoleToken === undefined) {
    throw new UsageError(
      `the console listens on ${options.host} only with CHECKOUT_CONSOLE_TOKEN set (a long random string); or keep the default --host 127.0.0.1 and use an SSH tunnel`,
    );
  }
  // The fulfillment module is optional here: without it the console still shows and retries (serve runs them).
  let handlersLoaded = true;
  let runtime;
  try {
    runtime = await openRuntime(io, { handlers: true, handlersFile: options.handlers });
  } catch (error) {
    if (options.handlers !== undefined || !(error instanceof ConfigError)) throw error;
    handlersLoaded = false;
    // Opened without the module first: a configuration error that is not the module's (the
    // store, LOG_LEVEL) then stops the console as itself, with no word of running without it.
    runtime = await openRuntime(io, { handlers: false });
    writeLine(
      io.stderr,
      `checkout-kit: ${(error as Error).message.split('\n')[0]} The console runs without it: "Reconcile now" is off and retried runs wait for serve.`,
    );
  }
  const Fastify = await loadFastify('checkout-kit console');
  const app = Fastify({ ...SPEC_ERROR_OPTIONS });
  app.setErrorHandler(specErrorHandler(runtime.logger, 'console'));
  app.setNotFoundHandler(notFoundReply(`: the console is at ${CONSOLE_PREFIX}/`));
  app.get('/', async (_request, reply) => reply.redirect(`${CONSOLE_PREFIX}/`, 303));
  const publicUrl = runtime.config.publicUrl ?? `http://127.0.0.1:${runtime.config.port ?? 3000}`;
  const operations = createOperations(runtime, { console: true, alerts: false, publicUrl, handlersLoaded });
  await operations.register(app);
  const address = await listenOn(app, { port, host: options.host }, '--port');
  writeLine(
    io.stdout,
    `checkout-kit console on ${address}${CONSOLE_PREFIX}/ (${consoleAccess(options.host, runtime.config.consoleToken)}; store: ${runtime.store.description})`,
  );
  await stopped;
  await app.close();
  await runtime.close();
}
