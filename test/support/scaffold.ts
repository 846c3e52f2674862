import { readFileSync } from 'node:fs';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** Every entry of package.json's `exports` (`checkout-kit`, `checkout-kit/fastify`, …) and the source it is built from. */
export const KIT_ENTRIES: Record<string, string> = Object.fromEntries(
  Object.entries((JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports).map(
    ([subpath, { import: esm }]) => [`checkout-kit${subpath.slice(1)}`, join(REPO, esm.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'))],
  ),
);

/** `checkout-kit` as the scaffold imports it, mapped to this repository's sources (no build, no install, no network). */
const KIT_PATHS = Object.fromEntries(Object.entries(KIT_ENTRIES).map(([specifier, source]) => [specifier, [source]]));

/**
 * Make a scaffold in `dir` run from this repository: its packages are the ones checkout-kit's own
 * tests use (node_modules linked), and `checkout-kit` resolves to src/ through the returned
 * `tsconfig.paths.json` (give it to tsx as TSX_TSCONFIG_PATH, or to the compiler).
 */
export async function linkKit(dir: string): Promise<string> {
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const config = join(dir, 'tsconfig.paths.json');
  await writeFile(config, JSON.stringify({ extends: './tsconfig.json', compilerOptions: { paths: KIT_PATHS } }));
  return config;
}
