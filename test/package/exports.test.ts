import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${REPO}/package.json`, 'utf8')) as { exports: Record<string, { types: string; import: string }> };

/** `./dist/x/index.js` is built from `src/x/index.ts`. */
const sourceOf = (target: string) => `${REPO}/${target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')}`;

describe('package exports', () => {
  it('every subpath is built from a source file, with its declarations beside it', () => {
    for (const [subpath, entry] of Object.entries(pkg.exports)) {
      expect(existsSync(sourceOf(entry.import)), `${subpath} → ${entry.import}`).toBe(true);
      expect(entry.types, subpath).toBe(entry.import.replace(/\.js$/, '.d.ts'));
    }
  });

  it('checkout-kit/postgres gives the PostgreSQL store the README tells users to construct, as the root does', async () => {
    const postgres = (await import(sourceOf(pkg.exports['./postgres']!.import))) as Record<string, unknown>;
    const root = (await import(sourceOf(pkg.exports['.']!.import))) as Record<string, unknown>;
    expect(typeof postgres.PostgresStore).toBe('function');
    expect(root.PostgresStore).toBe(postgres.PostgresStore);
  });
});
