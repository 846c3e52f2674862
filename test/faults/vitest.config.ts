import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The reliability suite (`npm run test:faults`): the real processes on real stores, killed,
 * flooded and fed garbage. Slow by nature, so apart from `npm test`'s unit and contract suites;
 * one file at a time, since each scenario loads the two cores on its own. Sizes grow with the
 * FAULTS_* environment variables for a longer soak.
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 300_000,
    // expect.poll waits for a state up to this long (vitest's own default, 1 s, is a race on a busy machine).
    expect: { poll: { timeout: 30_000 } },
    hookTimeout: 120_000,
    maxWorkers: 1,
    // Each scenario prints its figures; keep them in the output.
    disableConsoleIntercept: true,
    reporters: process.env.VITEST_FAULTS_JSON ? ['default', 'json'] : ['default'],
    outputFile: process.env.VITEST_FAULTS_JSON ? { json: process.env.VITEST_FAULTS_JSON } : {},
  },
});
