import type { FastifyInstance } from 'fastify';
import { UsageError } from '../exit.js';
import { quoted } from '../flags.js';
import { publicUrlOf } from '../../config/index.js';
import { writeLine, type CliIO } from '../io.js';
import { openRuntime } from '../runtime.js';
import { consoleAccess } from '../console-access.js';
import { CONSOLE_PREFIX } from '../operations.js';
import { buildServeApp } from '../serve-app.js';
import { listenOn } from '../../fastify/listen-on.js';
import { untilSignal } from '../signals.js';

export interface ServeFlags {
  port?: number;
  host?: string;
  handlers?: string;
  /** As given: checked by `publicUrlFlag` before anything opens. */
  publicUrl?: string;
  console?: boolean;
}

/** `--public-url`, by the rule `CHECKOUT_PUBLIC_URL` is read with. */
function publicUrlFlag(value: string): string {
  const url = publicUrlOf(value);
  if (url === null) throw new UsageError(`--public-url takes an http(s) URL such as https://shop.example, got ${quoted(value)}.`);
  return url;
}

/** `checkout-kit serve`: the receiver and the checkout routes until SIGINT/SIGTERM. */
export async function serve(options: ServeFlags, io: CliIO): Promise<void> {
  // Checked up front as CHECKOUT_PUBLIC_URL is: a bad one would fail every checkout with a 500.
  const publicUrlGiven = options.publicUrl === undefined ? undefined : publicUrlFlag(options.publicUrl);
  // Listening for signals before the listening line: a supervisor may send SIGTERM as soon as it reads it.
  const stopped = untilSignal();
  const runtime = await openRuntime(io, {
    handlers: true,
    handlersFile: options.handlers,
    longRunning: true,
    // Without a client the engine would decide from the webhook's own data: a webhook is only
    // a hint, so serve never runs handlers on news the service has not confirmed.
    requireService:
      'serve confirms every event with the service before a handler runs: set CHECKOUT_BASE_URL and CHECKOUT_API_KEY (or CHECKOUT_INVOICE_KEY), or for a partner platform CHECKOUT_PARTNER_API_KEY and CHECKOUT_PARTNER_SIGNING_SECRET; `checkout-kit doctor` checks them.',
  });
  let app: FastifyInstance | undefined;
  try {
    const port = options.port ?? runtime.config.port ?? 3000;
    // PORT is checked for digits when the configuration is read; its range is checked here.
    if (port > 65_535) throw new UsageError(`PORT takes a port number (0: any free port), got "${port}".`);
    const host = options.host ?? runtime.config.host ?? '127.0.0.1';
    const publicUrl = publicUrlGiven ?? runtime.config.publicUrl;
    ({ app } = await buildServeApp(runtime, { publicUrl: publicUrl ?? `http://${host}:${port}`, console: options.console ?? false }));
    const address = await listenOn(app, { port, host }, '--port or PORT', '--host or HOST');
    writeLine(io.stdout, `checkout-kit serve listening on ${address} (store: ${runtime.store.description})`);
    if (options.console) writeLine(io.stdout, `console on ${address}${CONSOLE_PREFIX}/ (${consoleAccess(host, runtime.config.consoleToken)})`);
  } catch (error) {
    // A start that failed (port in use, bad option) must not leave the store's pool or the
    // app's timers keeping the process alive after the error is printed.
    await app?.close().catch(() => undefined);
    await runtime.close().catch(() => undefined);
    throw error;
  }
  await stopped;
  await app.close();
  await runtime.close();
}
