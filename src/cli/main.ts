#!/usr/bin/env node
import * as nodeModule from 'node:module';
import { messageOf } from '../errors/message-of.js';

// Node 22.1+ keeps compiled code between runs (in the temp folder): every later command starts faster.
// Turned on before anything else loads: a module compiled before it (every static import of this
// file) is compiled afresh on every run. So this file imports only what cannot wait (messageOf
// imports nothing), and the rest once the cache is on.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

/**
 * `checkout-kit --version` alone is answered here, as the program would answer it, before commander
 * and the commands' definitions load; everything else goes through the program.
 */
async function main(argv: string[]): Promise<number> {
  const { kitVersion, VERSION_FLAGS } = await import('./version.js');
  if (argv.length === 3 && VERSION_FLAGS.includes(argv[2]!)) {
    process.stdout.write(`${kitVersion()}\n`);
    return 0;
  }
  const { run } = await import('./program.js');
  return run(argv);
}

// The only place that exits the process: everything else returns or throws.
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`checkout-kit: ${messageOf(error)}\n`);
    process.exitCode = 2;
  },
);
