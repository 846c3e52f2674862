import { describe, expect, it } from 'vitest';
import { runWorkerOn } from './spawned-runtime.js';

describe('checkout-kit/web on Bun (Bun.serve)', () => {
  it('stores a signed multibyte delivery once, acknowledges the duplicate, refuses a tampered copy', async () => {
    const { version } = await runWorkerOn('bun', (file) => ['run', file]);
    expect(version).toMatch(/^bun \d+\.\d+/);
  });
});
