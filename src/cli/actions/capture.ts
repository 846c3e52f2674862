import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { loadFastify } from '../../fastify/load-fastify.js';
import { loadConfig } from '../../config/index.js';
import { saveCapture } from '../../devtools/index.js';
import { printable } from '../../errors/index.js';
import { UsageError } from '../exit.js';
import { writeLine, type CliIO } from '../io.js';
import { listenOn } from '../../fastify/listen-on.js';
import { untilSignal } from '../signals.js';

export interface CaptureFlags {
  port: number;
  out: string;
  json?: boolean;
}

/** `--out`, made if missing: a path that cannot hold captures is refused before listening, not met by every delivery. */
async function captureFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'it, or a folder above it, is a file' : (error as Error).message;
    throw new UsageError(`--out ${dir} cannot hold captures (${why}): name a folder you can write to.`, { cause: error });
  }
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
  await captureFolder(dir);
  const stopped = untilSignal();
  const Fastify = await loadFastify('checkout-kit capture');
  const app = Fastify({ forceCloseConnections: true });
  // Every content type, unparsed: the body is kept exactly as it arrived.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/*', async (request) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    let file: string;
    try {
      file = await saveCapture(dir, { method: request.method, url: request.url, rawHeaders: request.raw.rawHeaders, body });
    } catch (error) {
      // The sender sees a 500; the operator, watching this terminal, must see it too.
      writeLine(io.stderr, `checkout-kit: could not save ${request.method} ${printable(request.url)} in ${dir}: ${(error as Error).message}`);
      throw error;
    }
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
