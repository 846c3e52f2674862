import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'test/faults/**', 'node_modules/**'],
    testTimeout: 60_000,
    // expect.poll waits for a state up to this long (vitest's own default, 1 s, is a race on a busy machine).
    expect: { poll: { timeout: 30_000 } },
    hookTimeout: 60_000,
    // Tests start real servers, processes and databases: two cores, so keep parallelism modest.
    maxWorkers: 2,
    // CI asks for a JSON report too, to print "N passed, N failed".
    reporters: process.env.VITEST_JSON ? ['default', 'json'] : ['default'],
    outputFile: process.env.VITEST_JSON ? { json: process.env.VITEST_JSON } : {},
  },
});
