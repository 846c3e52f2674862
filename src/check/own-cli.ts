import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The argv that runs this checkout-kit's own CLI with `args`: the built `cli/main.js`, or under
 * tsx (from a clone) `cli/main.ts` with the tsx loader.
 */
export function ownCli(args: readonly string[]): string[] {
  const extension = extname(fileURLToPath(import.meta.url));
  const main = fileURLToPath(new URL(`../cli/main${extension}`, import.meta.url));
  const loader = extension === '.ts' ? ['--import', import.meta.resolve('tsx')] : [];
  return [process.execPath, ...loader, main, ...args];
}
