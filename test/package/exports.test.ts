import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${REPO}/package.json`, 'utf8')) as {
  exports: Record<string, { types: string; import: string }>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

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

  it('checkout-kit/fastify gives the fastify plugins, the same functions the root exports', async () => {
    const fastify = (await import(sourceOf(pkg.exports['./fastify']!.import))) as Record<string, unknown>;
    const root = (await import(sourceOf(pkg.exports['.']!.import))) as Record<string, unknown>;
    expect(Object.keys(fastify).sort()).toEqual(['checkoutConsole', 'checkoutRoutes', 'checkoutWebhooks', 'healthRoutes', 'metricsRoute']);
    for (const [name, plugin] of Object.entries(fastify)) {
      expect(typeof plugin, name).toBe('function');
      expect(root[name], name).toBe(plugin);
    }
  });

  it('fastify is a peer dependency, so the plugins run on the application\'s own fastify; the tests install it as a dev dependency', () => {
    expect(pkg.peerDependencies.fastify).toMatch(/^\^5\./);
    expect(pkg.devDependencies.fastify).toBe(pkg.peerDependencies.fastify);
    expect(pkg.dependencies.fastify).toBeUndefined();
  });
});
