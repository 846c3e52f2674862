import { DEFAULT_FRAMEWORK, FRAMEWORK_SCAFFOLDS, type Framework, type FrameworkScaffold } from './frameworks.js';

/**
 * Files every scaffold gets, as `[source in templates/, destination in the target]`. An explicit
 * map (as create-t3-app does) rather than a folder walk: a stray file in templates/ is never
 * shipped by accident, and dotfiles are stored under `_names` so npm packs them (npm drops
 * `.gitignore` from packages) and editors do not treat them as the repo's own.
 */
const COMMON_FILES: ReadonlyArray<readonly [source: string, destination: string]> = [
  ['src/orders.ts', 'src/orders.ts'],
  ['fulfillment.ts', 'fulfillment.ts'],
  ['test/fulfillment.test.ts', 'test/fulfillment.test.ts'],
  ['tsconfig.json', 'tsconfig.json'],
  ['README.md', 'README.md'],
  ['_env.example', '.env.example'],
  ['_gitignore', '.gitignore'],
  ['deploy/crontab', 'deploy/crontab'],
  ['deploy/checkout-reconcile.service', 'deploy/checkout-reconcile.service'],
  ['deploy/checkout-reconcile.timer', 'deploy/checkout-reconcile.timer'],
  ['_github/workflows/checkout-check.yml', '.github/workflows/checkout-check.yml'],
];

/** The map for one framework: its own files first, then the common ones it does not replace. */
export function templateFiles(framework: Framework): ReadonlyArray<readonly [source: string, destination: string]> {
  const scaffold: FrameworkScaffold = FRAMEWORK_SCAFFOLDS[framework];
  const own = scaffold.files;
  const replaced = new Set([...own.map(([, destination]) => destination), ...(scaffold.omits ?? [])]);
  return [...own, ...COMMON_FILES.filter(([, destination]) => !replaced.has(destination))];
}

/** The default (fastify) scaffold's files. */
export const TEMPLATE_FILES = templateFiles(DEFAULT_FRAMEWORK);
