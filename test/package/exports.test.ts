import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPTIONAL_PEERS } from '../../src/errors/index.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
interface Target {
  types: string;
  default: string;
}
const pkg = JSON.parse(readFileSync(`${REPO}/package.json`, 'utf8')) as {
  exports: Record<string, { import: Target; require: Target }>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
};

/** `./dist/x/index.js` is built from `src/x/index.ts`. */
const sourceOf = (target: string) => `${REPO}/${target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')}`;
const esm = (subpath: string) => pkg.exports[subpath]!.import.default;

describe('package exports', () => {
  it('every subpath is built from a source file, with its declarations beside it; require gets the .cjs and .d.cts beside them', () => {
    for (const [subpath, entry] of Object.entries(pkg.exports)) {
      expect(Object.keys(entry), subpath).toEqual(['import', 'require']);
      expect(existsSync(sourceOf(entry.import.default)), `${subpath} → ${entry.import.default}`).toBe(true);
      expect(entry.import.types, subpath).toBe(entry.import.default.replace(/\.js$/, '.d.ts'));
      expect(entry.require, subpath).toEqual({
        types: entry.import.default.replace(/\.js$/, '.d.cts'),
        default: entry.import.default.replace(/\.js$/, '.cjs'),
      });
    }
  });

  it('checkout-kit/postgres gives the PostgreSQL store the README tells users to construct, as the root does', async () => {
    const postgres = (await import(sourceOf(esm('./postgres')))) as Record<string, unknown>;
    const root = (await import(sourceOf(esm('.')))) as Record<string, unknown>;
    expect(typeof postgres.PostgresStore).toBe('function');
    expect(root.PostgresStore).toBe(postgres.PostgresStore);
  });

  it("the PostgreSQL store's declarations name pg's types, so @types/pg is a dependency, as pg is", () => {
    expect(pkg.dependencies.pg).toBeDefined();
    expect(pkg.dependencies['@types/pg']).toBeDefined();
  });

  it('checkout-kit/fastify gives the fastify plugins, the same functions the root exports', async () => {
    const fastify = (await import(sourceOf(esm('./fastify')))) as Record<string, unknown>;
    const root = (await import(sourceOf(esm('.')))) as Record<string, unknown>;
    expect(Object.keys(fastify).sort()).toEqual(['checkoutConsole', 'checkoutRoutes', 'checkoutWebhooks', 'healthRoutes', 'metricsRoute']);
    for (const [name, plugin] of Object.entries(fastify)) {
      expect(typeof plugin, name).toBe('function');
      expect(root[name], name).toBe(plugin);
    }
  });

  it("fastify and tsx are optional peers, so the plugins run on the application's own fastify and an install without them is lean; the tests install them as dev dependencies", () => {
    for (const [name, install] of Object.entries(OPTIONAL_PEERS)) {
      const major = /@(\d+)$/.exec(install)?.[1];
      expect(pkg.peerDependencies[name], name).toMatch(new RegExp(`^\\^${major}\\.`));
      expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
      expect(pkg.devDependencies[name], name).toBe(pkg.peerDependencies[name]);
      expect(pkg.dependencies[name], name).toBeUndefined();
    }
  });
});
