import { FRAMEWORK_SCAFFOLDS, type Framework } from './frameworks.js';
import type { KitManifest } from './package-root.js';
import { ScaffoldError } from './scaffold-error.js';

/** What the scaffold needs in the target's package.json. */
export interface PackageRequirements {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** npm scripts the scaffold adds (an existing script of the same name is never replaced). */
export const SCAFFOLD_SCRIPTS: Readonly<Record<string, string>> = {
  'checkout:serve': 'checkout-kit serve',
  'checkout:reconcile': 'checkout-kit reconcile',
  'checkout:sandbox': 'checkout-kit sandbox',
  dev: 'tsx watch src/server.ts',
  test: 'vitest run',
};

/**
 * tsx is a dependency, not a dev one: `checkout-kit serve` and `reconcile` load the scaffold's
 * `fulfillment.ts` through it in production too, and checkout-kit only names it as an optional peer.
 */
const DEPENDENCIES = ['tsx'] as const;
/**
 * fastify is among them for the scaffold's `checkout:sandbox` script and `checkout-kit check` (its
 * CI runs it), which run on fastify whatever the shop's framework: a dev dependency where the
 * server does not already depend on it.
 */
const DEV_DEPENDENCIES = ['typescript', 'vitest', '@types/node', 'fastify'] as const;

/**
 * The scripts and dependencies of the scaffold for `framework`. `checkout-kit` is pinned to the
 * running version's minor range; the others take the ranges checkout-kit itself is built and tested
 * with (the framework tests run against them), so the scaffold's framework and TypeScript match.
 */
export function packageRequirements(kit: KitManifest, framework: Framework = 'fastify'): PackageRequirements {
  const scaffold = FRAMEWORK_SCAFFOLDS[framework];
  const rangeOf = (name: string): string => {
    const range = kit.dependencies?.[name] ?? kit.devDependencies?.[name];
    if (range === undefined) throw new ScaffoldError(`checkout-kit's package.json does not list ${name}: reinstall checkout-kit.`);
    return range;
  };
  const ranges = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, rangeOf(name)]));
  return {
    scripts: { ...SCAFFOLD_SCRIPTS, ...scaffold.scripts },
    dependencies: { 'checkout-kit': `^${kit.version}`, ...ranges([...DEPENDENCIES, ...scaffold.dependencies]) },
    devDependencies: ranges([...DEV_DEPENDENCIES, ...scaffold.devDependencies].filter((name) => !(scaffold.dependencies as readonly string[]).includes(name))),
  };
}
