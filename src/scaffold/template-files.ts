/**
 * Every file `init` copies, as `[source in templates/, destination in the target]`. An explicit
 * map (as create-t3-app does) rather than a folder walk: a stray file in templates/ is never
 * shipped by accident, and dotfiles are stored under `_names` so npm packs them (npm drops
 * `.gitignore` from packages) and editors do not treat them as the repo's own.
 */
export const TEMPLATE_FILES: ReadonlyArray<readonly [source: string, destination: string]> = [
  ['src/server.ts', 'src/server.ts'],
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
];
