import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ApiError, isOffSpec, NoStoreError } from '../../errors/index.js';
import { CONNECTION_VARIABLES, describeOutcomeRules, loadConfig, roleOf, roleVariables, type CheckoutKitConfig } from '../../config/index.js';
import { readVariables } from '../../config/environment.js';
import { readSandboxCredentials, sandboxMismatches, type SandboxMismatch } from '../../devtools/index.js';
import { loadHandlers, NoFulfillmentModuleError } from '../../fulfillment/index.js';
import { createLogger, silentLogger } from '../../log/index.js';
import { CREDENTIALS_FILE } from '../../sandbox/index.js';
import { openStore } from '../../store/open.js';
import { loadDriver } from '../../store/sqlite/driver.js';
import { isSound, SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { DEFAULT_SANDBOX_DATA } from '../defaults.js';
import { EXIT } from '../exit.js';
import { output, table, type CliIO } from '../io.js';
import { clientFromConfig, partnerFromConfig } from '../../client/index.js';

interface Check {
  check: string;
  result: 'ok' | 'warn' | 'fail';
  detail: string;
}

const NIL_UUID = '00000000-0000-4000-8000-000000000000';

/**
 * Whether the service takes a read with `get`: a 404 for a payment that cannot exist, in the spec's
 * words, means the key and signature were accepted; an HTML 404 is another server's (a wrong
 * CHECKOUT_BASE_URL), which accepted nothing.
 */
async function keyProbe(check: string, get: (id: string) => Promise<unknown>): Promise<Check> {
  try {
    await get(NIL_UUID);
    return { check, result: 'ok', detail: 'accepted' };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && !isOffSpec(error)) return { check, result: 'ok', detail: 'accepted (probe answered 404)' };
    return { check, result: 'fail', detail: (error as Error).message };
  }
}

async function serviceChecks(config: CheckoutKitConfig): Promise<Check[]> {
  // A partner platform reads its tenants' payments with the partner's key (README, Assumptions).
  const partner = partnerFromConfig(config);
  if (partner) return [await keyProbe('partner key', (id) => partner.payments.get(id))];
  const client = clientFromConfig(config);
  if (!client) return [{ check: 'service', result: 'warn', detail: 'not checked: CHECKOUT_BASE_URL and a key are needed' }];
  const checks: Check[] = [];
  if (config.apiKey && config.signingSecret) checks.push(await keyProbe('merchant key', (id) => client.payments.get(id)));
  if (config.invoiceKey) {
    try {
      const invoices = await client.invoices.list();
      checks.push({ check: 'invoice key', result: 'ok', detail: `accepted (${invoices.length} recent invoices)` });
    } catch (error) {
      checks.push({ check: 'invoice key', result: 'fail', detail: (error as Error).message });
    }
  }
  return checks;
}

/**
 * The keys the configuration's role needs: a merchant's shop its merchant key pair (and an invoice
 * key for invoices); a partner platform its partner key pair and no merchant key at all.
 */
function credentialChecks(config: CheckoutKitConfig): Check[] {
  if (roleOf(config) === 'partner')
    return [
      config.partnerSigningSecret
        ? { check: 'partner credentials', result: 'ok', detail: 'CHECKOUT_PARTNER_API_KEY and CHECKOUT_PARTNER_SIGNING_SECRET set' }
        : {
            check: 'partner credentials',
            result: 'fail',
            detail: 'set CHECKOUT_PARTNER_SIGNING_SECRET beside CHECKOUT_PARTNER_API_KEY (onboarding, payments)',
          },
    ];
  return [
    config.apiKey && config.signingSecret
      ? { check: 'merchant credentials', result: 'ok', detail: 'CHECKOUT_API_KEY and CHECKOUT_SIGNING_SECRET set' }
      : { check: 'merchant credentials', result: 'fail', detail: 'set CHECKOUT_API_KEY and CHECKOUT_SIGNING_SECRET (payments, confirmation)' },
    config.invoiceKey
      ? { check: 'invoice key', result: 'ok', detail: 'set' }
      : { check: 'invoice key', result: 'warn', detail: 'CHECKOUT_INVOICE_KEY not set: no invoices' },
  ];
}

function mismatchText(mismatch: SandboxMismatch, config: CheckoutKitConfig, sandboxUrl: string, env: NodeJS.ProcessEnv): string {
  if (mismatch.problem === 'unset') return `${mismatch.variable} is not set`;
  // The URL is no secret: show both. A secret only "differs".
  const differs =
    mismatch.variable === CONNECTION_VARIABLES.baseUrl
      ? `${mismatch.variable} is ${config.baseUrl}, the sandbox's is ${sandboxUrl}`
      : `${mismatch.variable} differs`;
  return env[mismatch.variable]?.trim() ? `${differs} (set in the environment, which wins over .env: unset it)` : differs;
}

/**
 * With a sandbox's credentials in `.sandbox/` beside the shop: whether the connection variables
 * are its own. A live configuration is meant to differ (a warning only).
 */
async function sandboxCheck(config: CheckoutKitConfig, env: NodeJS.ProcessEnv, cwd: string): Promise<Check[]> {
  const dir = join(cwd, DEFAULT_SANDBOX_DATA);
  const file = join(DEFAULT_SANDBOX_DATA, CREDENTIALS_FILE);
  if (!existsSync(join(dir, CREDENTIALS_FILE))) return [];
  const check = 'sandbox credentials';
  let mismatches: SandboxMismatch[];
  let sandboxUrl: string;
  try {
    const credentials = await readSandboxCredentials(dir);
    mismatches = sandboxMismatches(config, credentials);
    sandboxUrl = credentials.baseUrl;
  } catch (error) {
    return [{ check, result: 'warn', detail: (error as Error).message }];
  }
  if (mismatches.length === 0) return [{ check, result: 'ok', detail: `${roleVariables(roleOf(config)).join(', ')} match ${file}` }];
  const what = mismatches.map((mismatch) => mismatchText(mismatch, config, sandboxUrl, env)).join('; ');
  const fix = `to use the sandbox, restart it with --write-env (\`checkout-kit sandbox --write-env${roleOf(config) === 'partner' ? ' --partner' : ''}\`), which sets them in .env`;
  return [{ check, result: config.environment === 'live' ? 'warn' : 'fail', detail: `${what} (compared with ${file}): ${fix}` }];
}

/**
 * Whether the store opens, read-only: a diagnosis creates, migrates and writes nothing. The
 * embedded store's every page is read (SQLite's quick check: SQLite meets damage only in the pages
 * it reads, and opening reads few); `store check` also matches every index to its table.
 */
async function storeCheck(config: CheckoutKitConfig, cwd: string): Promise<Check> {
  try {
    const store = await openStore(config.store, { cwd, logger: silentLogger, readonly: true });
    const findings = store instanceof SqliteStore ? store.integrityCheck({ quick: true }) : ['ok'];
    await store.close();
    if (!isSound(findings))
      return {
        check: 'store',
        result: 'fail',
        detail: `The store ${store.description} is damaged (${findings[0]}): \`checkout-kit store check\` lists what; restore the latest backup (\`checkout-kit store restore <file>\`), then \`checkout-kit reconcile\` catches up.`,
      };
    return { check: 'store', result: 'ok', detail: store.description };
  } catch (error) {
    // A new shop has none yet: serve makes it, once it finds a SQLite driver (Node 20 without
    // better-sqlite3 has none, and serve would stop on it).
    if (error instanceof NoStoreError) {
      try {
        if (config.store.startsWith('file:')) loadDriver();
      } catch (noDriver) {
        return { check: 'store', result: 'fail', detail: `${error.message} \`checkout-kit serve\` cannot create it: ${(noDriver as Error).message}` };
      }
      return { check: 'store', result: 'warn', detail: `${error.message} \`checkout-kit serve\` creates it on its first start.` };
    }
    return { check: 'store', result: 'fail', detail: (error as Error).message };
  }
}

/** Every check, in order; a failing configuration stops the ones that need it. */
async function runChecks(env: NodeJS.ProcessEnv, cwd: string): Promise<Check[]> {
  let config: CheckoutKitConfig;
  try {
    config = loadConfig({ env, cwd });
  } catch (error) {
    return [{ check: 'configuration', result: 'fail', detail: (error as Error).message }];
  }
  const checks: Check[] = [{ check: 'configuration', result: 'ok', detail: `environment ${config.environment ?? 'unknown (no keys)'}` }];
  checks.push(
    config.baseUrl
      ? { check: 'base URL', result: 'ok', detail: config.baseUrl }
      : { check: 'base URL', result: 'fail', detail: 'CHECKOUT_BASE_URL is not set' },
  );
  checks.push(...credentialChecks(config));
  checks.push(
    config.webhookSecrets.length > 0
      ? { check: 'webhook secrets', result: 'ok', detail: `${config.webhookSecrets.length} secret(s)` }
      : { check: 'webhook secrets', result: 'fail', detail: 'CHECKOUT_WEBHOOK_SECRET is not set: the receiver cannot verify deliveries' },
  );
  checks.push(
    config.redirectHosts.length > 0
      ? { check: 'redirect hosts', result: 'ok', detail: config.redirectHosts.join(', ') }
      : { check: 'redirect hosts', result: 'fail', detail: 'no host allowed: set CHECKOUT_REDIRECT_HOSTS or CHECKOUT_BASE_URL' },
  );
  checks.push(...(await sandboxCheck(config, env, cwd)));
  checks.push({ check: 'outcome rules', result: 'ok', detail: describeOutcomeRules(config.outcomeRules) });
  // Its own row: every command's logger reads it, and the store's would otherwise fail on it.
  try {
    // Read as the commands read them: the environment over `.env`.
    const variables = readVariables({ env, cwd });
    const [level, format] = [variables('LOG_LEVEL'), variables('LOG_FORMAT')];
    createLogger({ level, format, destination: new PassThrough() });
    checks.push({ check: 'log level', result: 'ok', detail: `${level ?? 'info (default)'}, ${format ?? 'pretty on a terminal, else json (default)'}` });
  } catch (error) {
    checks.push({ check: 'log level', result: 'fail', detail: (error as Error).message });
  }
  checks.push(await storeCheck(config, cwd));
  try {
    const handlers = await loadHandlers(config.handlers, cwd);
    checks.push({ check: 'fulfillment module', result: 'ok', detail: `handlers: ${Object.keys(handlers).join(', ') || 'none'}` });
  } catch (error) {
    // serve and reconcile refuse all of these; only having no module at all can be meant (a backend
    // that wires the engine into its own code), so that alone is a warning.
    const missing = error instanceof NoFulfillmentModuleError;
    const detail = missing
      ? `${(error as Error).message} serve and reconcile need one; a backend that wires the engine into its own code does not.`
      : (error as Error).message;
    checks.push({ check: 'fulfillment module', result: missing ? 'warn' : 'fail', detail });
  }
  checks.push(...(await serviceChecks(config)));
  return checks;
}

/** `checkout-kit doctor`: every check, as a table or JSON; exit 1 when one fails. */
export async function doctor(options: { json?: boolean }, io: CliIO, setExit: (code: number) => void): Promise<void> {
  const checks = await runChecks(io.env, io.cwd);
  output(io, options.json ?? false, checks, (list) =>
    table(
      list.map((c) => ({ ...c })),
      ['check', 'result', 'detail'],
    ),
  );
  if (checks.some((c) => c.result === 'fail')) setExit(EXIT.failures);
}
