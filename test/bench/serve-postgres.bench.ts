/**
 * `checkout-kit serve` (receiver + fulfillment engine) on PostgreSQL: the `serve` suite
 * (serve.bench.ts) with `CHECKOUT_STORE=postgres://…?schema=<fresh>`, the schema dropped after.
 * DATABASE_URL picks the server (default postgres://postgres@127.0.0.1:5432/test).
 *
 * Run alone: `node --import tsx test/bench/run.ts serve-postgres`.
 */
import { fileURLToPath } from 'node:url';
import { runOn } from './serve.bench.js';
import type { BenchResult } from './serve-harness.js';

export function run(): Promise<BenchResult[]> {
  return runOn('postgres');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.table(await run());
}
