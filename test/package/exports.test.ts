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
/** The runtime names of the entry a subpath names, from its source. */
const entry = async (subpath: string) => (await import(sourceOf(esm(subpath)))) as Record<string, unknown>;
/** Each of `names` is a function (or class) that `subpath` exports. */
async function expectFunctions(subpath: string, names: readonly string[]): Promise<void> {
  const exported = await entry(subpath);
  for (const name of names) expect(typeof exported[name], name).toBe('function');
}
const isClass = (value: unknown) => typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value));

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

  it('checkout-kit/postgres gives the PostgreSQL store the README tells users to construct; the root opens it by URL (openStore)', async () => {
    const postgres = await entry('./postgres');
    const root = await entry('.');
    expect(typeof postgres.PostgresStore).toBe('function');
    expect(root.PostgresStore).toBeUndefined();
    expect(typeof root.openStore).toBe('function');
  });

  it("the PostgreSQL store's declarations name pg's types, so @types/pg is a dependency, as pg is", () => {
    expect(pkg.dependencies.pg).toBeDefined();
    expect(pkg.dependencies['@types/pg']).toBeDefined();
  });

  it('checkout-kit/fastify gives the fastify plugins; the root does not repeat them', async () => {
    const fastify = await entry('./fastify');
    const root = await entry('.');
    expect(Object.keys(fastify).sort()).toEqual(['checkoutConsole', 'checkoutRoutes', 'checkoutWebhooks', 'healthRoutes', 'metricsRoute', 'onboardingRoutes']);
    for (const [name, plugin] of Object.entries(fastify)) {
      expect(typeof plugin, name).toBe('function');
      expect(root[name], name).toBeUndefined();
    }
  });

  it('checkout-kit/store gives the embedded stores and the run keys', async () => {
    const store = await entry('./store');
    expect(Object.keys(store).sort()).toEqual(['HANDLER_OUTCOMES', 'MemoryStore', 'OUTCOME_RANK', 'SqliteStore', 'parseRunKey', 'runKeys']);
    expect(isClass(store.MemoryStore)).toBe(true);
    expect(isClass(store.SqliteStore)).toBe(true);
  });

  it('checkout-kit/operations gives metrics, health, alerts, timelines and the engine observers, without a framework', async () => {
    await expectFunctions('./operations', [
      'EngineObservers',
      'createMetrics',
      'observeDeliveries',
      'createHealth',
      'createAlertMonitor',
      'createTimelineRecorder',
      'retryFailed',
    ]);
  });

  it("checkout-kit/testing gives the test helpers and check's harness", async () => {
    await expectFunctions('./testing', [
      'samplePayment',
      'sampleEvent',
      'signedWebhook',
      'fulfillmentContext',
      'signWebhook',
      'newWebhookSecret',
      'runCheck',
      'readHandlerCalls',
    ]);
  });

  it('each name comes from one entry, except checkout-kit/web, which stands alone for runtimes without Node', async () => {
    const from = new Map<string, string[]>();
    for (const subpath of Object.keys(pkg.exports)) {
      if (subpath === './web') continue;
      for (const name of Object.keys(await entry(subpath))) from.set(name, [...(from.get(name) ?? []), subpath]);
    }
    expect([...from].filter(([, subpaths]) => subpaths.length > 1)).toEqual([]);
  });

  it('the classes exported are those a merchant constructs or catches: no internal class', async () => {
    const classes = new Set<string>();
    for (const subpath of Object.keys(pkg.exports)) {
      for (const [name, value] of Object.entries(await entry(subpath))) if (isClass(value)) classes.add(name);
    }
    expect([...classes].sort()).toEqual([
      'ApiError',
      'CheckoutClient',
      'CheckoutError',
      'CheckoutKitError',
      'ConfigError',
      'EngineObservers',
      'FulfillmentEngine',
      'InvalidRequestError',
      'InvalidResponseError',
      'MemoryStore',
      'MoneyError',
      'NetworkError',
      'NoFulfillmentModuleError',
      'PartnerClient',
      'PostgresStore',
      'RedirectRejectedError',
      'SchemaValidationError',
      'ServiceCalls',
      'SqliteStore',
      'StoreError',
      'TimeoutError',
      'VerificationLog',
      'WebhookHandlerError',
      'WebhookVerificationError',
    ]);
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
