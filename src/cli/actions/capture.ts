import { relative, resolve } from 'node:path';
import { loadFastify } from '../../fastify/load-fastify.js';
import { loadConfig } from '../../config/index.js';
import { saveCapture } from '../../devtools/index.js';
import { UsageError } from '../exit.js';
import { writeLine, type CliIO } from '../io.js';
import { listenOn } from '../../fastify/listen-on.js';
import { untilSignal } from '../signals.js';

export interface CaptureFlags {
  port: number;
  out: string;
  json?: boolean;
}

/** `checkout-kit capture`: record deliveries, byte-exact, until SIGINT/SIGTERM. */
export async function capture(flags: CaptureFlags, io: CliIO): Promise<void> {
  const config = loadConfig({ env: io.env, cwd: io.cwd });
  if (config.environment === 'live') {
    throw new UsageError(
      'capture runs in the test environment only, and the configured keys (CHECKOUT_API_KEY) are live: use the test keys while discovering the signature.',
    );
  }
  const dir = resolve(io.cwd, flags.out);
  const stopped = untilSignal();
  const Fastify = await loadFastify('checkout-kit capture');
  const app = Fastify({ forceCloseConnections: true });
  // Every content type, unparsed: the body is kept exactly as it arrived.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/*', async (request) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const file = await saveCapture(dir, { method: request.method, url: request.url, rawHeaders: request.raw.rawHeaders, body });
    if (flags.json) writeLine(io.stdout, JSON.stringify({ captured: file, method: request.method, url: request.url, bytes: body.length }));
    else writeLine(io.stdout, `captured ${request.method} ${request.url} (${body.length} bytes) -> ${relative(io.cwd, file)}`);
    return { received: true };
  });
  const address = await listenOn(app, { port: flags.port, host: '127.0.0.1' }, '--port');
  if (flags.json) writeLine(io.stdout, JSON.stringify({ url: address, dir }));
  else {
    writeLine(io.stdout, `capture listening on ${address}, saving deliveries to ${dir}`);
    writeLine(
      io.stdout,
      'point a test webhook endpoint here (through a tunnel), send deliveries, then run `checkout-kit probe-signature --secret …`; Ctrl+C to stop',
    );
  }
  await stopped;
  await app.close();
}
