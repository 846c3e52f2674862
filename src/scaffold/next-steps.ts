import { relative } from 'node:path';
import { roleVariables } from '../config/variables.js';
import type { Framework } from './frameworks.js';

/**
 * What to do after `init`, in order: from a fresh scaffold to a paid order in the sandbox.
 * `keptScripts`: the project's own `dev` / `test` scripts, which init left in place.
 */
export function nextSteps(dir: string, cwd: string, keptScripts: readonly string[] = [], framework: Framework = 'fastify'): string[] {
  const where = relative(cwd, dir);
  const run = (script: string, command: string) => (keptScripts.includes(script) ? `${command}   (your own "${script}" script was kept)` : `npm run ${script}`);
  const partner = framework === 'partner';
  const role = partner ? 'partner' : 'merchant';
  return [
    ...(where === '' ? [] : [`cd ${where.includes(' ') ? JSON.stringify(where) : where}`]),
    'npm install',
    `npm run checkout:sandbox -- --webhook-url http://127.0.0.1:3000/webhooks/checkout --write-env${partner ? ' --partner' : ''}   (in another terminal; sets ${roleVariables(role).join(', ')} in .env, which it creates from .env.example)`,
    framework === 'next'
      ? `${run('dev', 'npx next dev')}   (in your Next.js app: the routes are in app/; POST your order form to /checkout)`
      : partner
        ? `${run('dev', 'npx tsx watch src/server.ts')}   (then onboard a tenant: curl -X POST localhost:3000/tenants -H 'content-type: application/json' -d '{"tenantId":"shop-1","name":"Shop 1","email":"owner@shop1.example"}', and POST /checkout with its tenantId)`
        : `${run('dev', 'npx tsx watch src/server.ts')}   (then open http://127.0.0.1:3000 and pay in the sandbox)`,
    run('test', 'npx vitest run'),
    partner
      ? 'before going live: npx checkout-kit check --partner --against http://127.0.0.1:3000/webhooks/checkout --start "npm run dev"   (two tenants, the same order id, a forged cross-tenant delivery, a missed webhook)'
      : 'before going live: npx checkout-kit check --against http://127.0.0.1:3000/webhooks/checkout --start "npm run dev"   (proves every handler runs exactly once in every scenario; CI runs it too: .github/workflows/checkout-check.yml)',
  ];
}
