import { readFile } from 'node:fs/promises';
import { createContext, runInContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { expectDeliveryFlow, type Answer } from '../receive/delivery-flow.js';
import { bundle, WORKER_ENV } from './support.js';

type Worker = { default: { fetch(request: Request, env: typeof WORKER_ENV): Promise<Response> } };

/**
 * Only what a Web runtime offers: WebCrypto, encoders, fetch's classes, streams, timers, console.
 * No Buffer, process, require, module or global: a Node built-in on the web path throws here.
 */
function webOnlyContext() {
  return createContext({
    crypto,
    TextEncoder,
    TextDecoder,
    Request,
    Response,
    Headers,
    ReadableStream,
    URL,
    URLSearchParams,
    atob,
    btoa,
    console,
    setTimeout,
    clearTimeout,
    queueMicrotask,
    structuredClone,
    DOMException,
  });
}

describe('checkout-kit/web in a Node vm context without Node’s globals', () => {
  it('verifies on WebCrypto: stores once, acknowledges the duplicate, refuses a tampered copy', async () => {
    const worker = await bundle('worker.ts', 'iife');
    try {
      const context = webOnlyContext();
      runInContext(await readFile(worker.file, 'utf8'), context, { filename: 'worker.js' });
      expect(runInContext('[typeof Buffer, typeof process, typeof require, typeof module, typeof global]', context)).toEqual([
        'undefined',
        'undefined',
        'undefined',
        'undefined',
        'undefined',
      ]);
      const { fetch: workerFetch } = (context as unknown as { checkoutWorker: Worker }).checkoutWorker.default;
      const call = async (path: string, init?: RequestInit) => workerFetch(new Request(`https://shop.example${path}`, init), WORKER_ENV);

      await expectDeliveryFlow({
        send: async (body, headers): Promise<Answer> => {
          const response = await call('/webhooks/checkout', { method: 'POST', headers, body });
          return { status: response.status, body: (await response.json()) as unknown };
        },
        stored: async () => (await (await call('/stored')).json()) as never,
      });
    } finally {
      await worker.remove();
    }
  });
});
