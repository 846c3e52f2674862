import { describe, expect, it } from 'vitest';
import { runWorkerOn } from './spawned-runtime.js';

describe('checkout-kit/web on Deno (Deno.serve)', () => {
  it('stores a signed multibyte delivery once, acknowledges the duplicate, refuses a tampered copy', async () => {
    const { version } = await runWorkerOn('deno', (file) => [
      'run',
      '--no-prompt',
      '--allow-net=127.0.0.1',
      '--allow-env=CHECKOUT_WEBHOOK_SECRET,NOW_MS',
      file,
    ]);
    expect(version).toMatch(/^deno \d+\.\d+/);
  });
});
