import { Miniflare } from 'miniflare';
import { describe, expect, it } from 'vitest';
import { bundle, expectWorkerReceives, WORKER_ENV } from './support.js';

/**
 * Start workerd without the LD_PRELOAD shim of `npm run test:clock` (libfaketime): workerd hangs
 * under it. The Worker's clock is the NOW_MS binding anyway, so the moved clock changes nothing here.
 */
async function startWithoutPreload(mf: Miniflare): Promise<URL> {
  const saved = Object.entries(process.env).filter(([name]) => name === 'LD_PRELOAD' || name.startsWith('FAKETIME'));
  for (const [name] of saved) delete process.env[name];
  try {
    return await mf.ready;
  } finally {
    for (const [name, value] of saved) process.env[name] = value;
  }
}

describe('checkout-kit/web on workerd (Cloudflare Workers, through miniflare)', () => {
  it('verifies on WebCrypto with no Node built-ins: stores once, acknowledges the duplicate, refuses a tampered copy', async () => {
    const worker = await bundle('worker.ts');
    // No nodejs_compat flag: the Worker gets no Buffer, no process, no node: modules.
    const mf = new Miniflare({ modules: true, scriptPath: worker.file, modulesRoot: worker.dir, compatibilityDate: '2025-01-01', bindings: WORKER_ENV });
    try {
      const url = await startWithoutPreload(mf);
      expect(url.hostname).toBe('127.0.0.1');
      const globals = await expectWorkerReceives(url.origin);
      // (workerd defines a `require` of its own, for CommonJS modules; what matters is that Node's are absent.)
      expect(globals).toMatchObject({ Buffer: 'undefined', process: 'undefined' });
    } finally {
      await mf.dispose();
      await worker.remove();
    }
  });
});
