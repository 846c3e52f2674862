import { relative } from 'node:path';
import { roleVariables } from '../config/variables.js';
import { nodeHasSqlite } from '../store/sqlite/driver.js';
import type { Framework } from './frameworks.js';

/**
 * What to do after `init`, in order: from a fresh scaffold to a paid order in the sandbox.
 * `keptScripts`: the project's own `dev` / `test` scripts, which init left in place. `nodeVersion`:
 * the Node the shop runs on; before 22.16 its store needs better-sqlite3, or `npm run dev` stops.
 */
export function nextSteps(
  dir: string,
  cwd: string,
  keptScripts: readonly string[] = [],
  framework: Framework = 'fastify',
  nodeVersion: string = process.versions.node,
): string[] {
  const where = relative(cwd, dir);
  const run = (script: string, command: string) => (keptScripts.includes(script) ? `${command}   (your own "${script}" script was kept)` : `npm run ${script}`);
  const partner = framework === 'partner';
  // What starts the scaffold's server: the project's own `dev` script, kept, may start something else.
  const start = keptScripts.includes('dev') ? (framework === 'next' ? 'npx next dev' : 'npx tsx src/server.ts') : 'npm run dev';
  const role = partner ? 'partner' : 'merchant';
  return [
    ...(where === '' ? [] : [`cd ${where.includes(' ') ? JSON.stringify(where) : where}`]),
    'npm install',
    ...(nodeHasSqlite(nodeVersion)
      ? []
      : [
          `npm install better-sqlite3@12   (Node v${nodeVersion} has no SQLite built in, which the store needs: 22.16 and later have it; npm 11 then asks for npm install-scripts approve better-sqlite3, which builds it)`,
        ]),
    `npm run checkout:sandbox -- --webhook-url http://127.0.0.1:3000/webhooks/checkout --write-env${partner ? ' --partner' : ''}   (in another terminal; sets ${roleVariables(role).join(', ')} in .env, which it creates from .env.example)`,
    ...(framework === 'next'
      ? [
          // Bundled, checkout-kit's optional loads (better-sqlite3, tsx) fail the build where they are not installed.
          "in next.config, set serverExternalPackages: ['checkout-kit']   (Next.js then loads it from node_modules instead of bundling it; the bundler cannot resolve the optional packages it loads only when present, better-sqlite3 and tsx)",
        ]
      : []),
    framework === 'next'
      ? `${run('dev', 'npx next dev')}   (in your Next.js app: the routes are in app/; POST your order form to /checkout)`
      : partner
        ? `${run('dev', 'npx tsx watch src/server.ts')}   (then onboard a tenant: curl -X POST localhost:3000/tenants -H 'content-type: application/json' -d '{"tenantId":"shop-1","name":"Shop 1","email":"owner@shop1.example"}', and POST /checkout with its tenantId)`
        : `${run('dev', 'npx tsx watch src/server.ts')}   (then open http://127.0.0.1:3000 and pay in the sandbox)`,
    run('test', 'npx vitest run'),
    partner
      ? `before going live: npx checkout-kit check --partner --against http://127.0.0.1:3000/webhooks/checkout --start "${start}"   (two tenants, the same order id, a forged cross-tenant delivery, a missed webhook)`
      : `before going live: npx checkout-kit check --against http://127.0.0.1:3000/webhooks/checkout --start "${start}"   (proves every handler runs exactly once in every scenario; CI runs it too: .github/workflows/checkout-check.yml)`,
  ];
}
