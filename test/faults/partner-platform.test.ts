import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { signWebhook } from '../../src/webhooks/index.js';
import { waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportFigures } from './support/report.js';
import { cli, Processes, startServe } from './support/store-processes.js';

// A partner platform as its operator runs it: one sandbox that drops and duplicates webhooks,
// `serve` with the partner's keys alone (one on a store file, or two on one PostgreSQL schema),
// `reconcile` beside it. Tenants are onboarded (one of them twice at once, one of them again), one
// has its own keys stored (sealed) and is read with them, another its own webhook secret, with which
// the sandbox signs its deliveries. Each pays orders 1001 and 1002 through its hosted page. Forged
// deliveries name another tenant's merchant for a payment, one of them signed with a tenant's own secret.

const FULFILLMENT = fileURLToPath(new URL('./support/partner-fulfillment.mjs', import.meta.url));
const TENANTS = ['tenant-a', 'tenant-b', 'tenant-c'] as const;
const ORDERS = ['1001', '1002'] as const;

const processes = new Processes();
afterEach(() => processes.stopAll());
afterAll(removeTempDirs);

interface Call {
  outcome: string;
  id: string;
  referenceId: string;
  key: string;
  tenantId: string | null;
  merchantId: string | null;
}

const DATABASE = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `ck_partner_${randomBytes(5).toString('hex')}`;

/** Whether the PostgreSQL server answers; the reason when it does not. */
async function unreachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: DATABASE, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}
const pgDown = await unreachable();
if (pgDown) console.log(`SKIPPED partner platform on PostgreSQL: ${new URL(DATABASE).host} is unreachable (${pgDown})`);
afterAll(async () => {
  if (pgDown) return;
  const client = new pg.Client({ connectionString: DATABASE });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await client.end();
});

const SCENARIO =
  "onboards each tenant once, creates and fulfils each tenant's orders once with its tenant, and neither a forged merchantId nor a tenant's own webhook secret moves another tenant's payment";

describe('a partner platform: one deployment for every tenant', () => {
  it(`${SCENARIO} (one serve, embedded store)`, () => partnerPlatform({ store: 'file:./store', serves: 1, name: 'partner-platform' }));

  it.skipIf(pgDown !== undefined)(`${SCENARIO} (two serves, PostgreSQL)`, () => {
    const url = new URL(DATABASE);
    url.searchParams.set('schema', SCHEMA);
    return partnerPlatform({ store: url.toString(), serves: 2, name: 'partner-platform-postgres' });
  });
});

async function partnerPlatform({ store, serves, name }: { store: string; serves: number; name: string }): Promise<void> {
  {
    const shop = await tempDir('ck-partner-shop-');
    const sandboxDir = await tempDir('ck-partner-sandbox-');
    const log = join(shop, 'calls.jsonl');
    const ports = await Promise.all(Array.from({ length: serves }, () => freePort()));
    const seed = Math.floor(Math.random() * 2 ** 31);
    const started = performance.now();

    const sandbox = processes.start(
      [
        'sandbox',
        '--port',
        '0',
        '--data',
        sandboxDir,
        ...ports.flatMap((port) => ['--webhook-url', `http://127.0.0.1:${port}/webhooks/checkout`]),
        '--drop',
        '0.3',
        '--duplicate',
        '0.3',
        '--seed',
        String(seed),
      ],
      { cwd: sandboxDir, env: { LOG_LEVEL: 'error' } },
    );
    const [, sandboxUrl, credentialsPath] = await waitForLine(sandbox, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)\ncredentials: (\S+)\n/);
    const creds = JSON.parse(await readFile(credentialsPath!, 'utf8'));
    // The partner's keys alone: no merchant key anywhere.
    const env = {
      CHECKOUT_BASE_URL: sandboxUrl!,
      CHECKOUT_PARTNER_API_KEY: creds.test.partner.apiKey,
      CHECKOUT_PARTNER_SIGNING_SECRET: creds.test.partner.signingSecret,
      CHECKOUT_WEBHOOK_SECRET: creds.webhookSecret,
      CHECKOUT_STORE: store,
      // Behind one address, as serves behind a load balancer: the buyer's return links are the same from each.
      CHECKOUT_PUBLIC_URL: `http://127.0.0.1:${ports[0]}`,
      CHECKOUT_HANDLERS: FULFILLMENT,
      PARTNER_LOG: log,
      // tenant-c's own keys are stored, sealed with it: its payments are read with them.
      CHECKOUT_SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    };
    const run = (args: string[]) => cli(processes, args, { cwd: shop, env });
    const onboard = async (tenant: string) => {
      const result = await run(['merchants', 'onboard', '--tenant', tenant, '--name', `Shop ${tenant}`, '--email', `${tenant}@example.com`, '--json']);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as { tenantId: string; merchantId: string };
    };

    // Onboarding: tenant-a twice at once, tenant-b once and then again, tenant-c once.
    const [a1, a2] = await Promise.all([onboard('tenant-a'), onboard('tenant-a')]);
    const b1 = await onboard('tenant-b');
    const b2 = await onboard('tenant-b');
    const c = await onboard('tenant-c');
    expect(a1.merchantId).toBe(a2.merchantId);
    expect(b1.merchantId).toBe(b2.merchantId);
    const merchantOf: Record<string, string> = { 'tenant-a': a1.merchantId, 'tenant-b': b1.merchantId, 'tenant-c': c.merchantId };
    const atService = JSON.parse(await readFile(join(sandboxDir, 'sandbox.json'), 'utf8')).merchants.filter((m: { externalTenantId?: string }) =>
      m.externalTenantId?.startsWith('tenant-'),
    );
    expect(atService.map((m: { externalTenantId: string }) => m.externalTenantId).sort()).toEqual([...TENANTS]);
    const ownKeys = await (await fetch(`${sandboxUrl}/sandbox/merchants/${c.merchantId}/keys`, { method: 'POST' })).json();
    await writeFile(join(shop, 'tenant-c.json'), JSON.stringify({ apiKey: ownKeys.apiKey, signingSecret: ownKeys.signingSecret }));
    expect((await run(['merchants', 'credentials', '--tenant', 'tenant-c', '--from-file', 'tenant-c.json'])).code).toBe(0);
    // tenant-b's own webhook secret is stored: the sandbox signs its payments' deliveries with it.
    const ownSecret = await (await fetch(`${sandboxUrl}/sandbox/merchants/${b1.merchantId}/webhook-secret`, { method: 'POST' })).json();
    await writeFile(join(shop, 'tenant-b.json'), JSON.stringify({ webhookSecret: ownSecret.webhookSecret }));
    const storedB = await run(['merchants', 'credentials', '--tenant', 'tenant-b', '--environment', 'test', '--from-file', 'tenant-b.json']);
    expect(storedB.code, storedB.stderr).toBe(0);

    await Promise.all(ports.map((port) => startServe(processes, port, { cwd: shop, env })));
    // Checkouts go to each serve in turn.
    let turn = 0;
    const origin = () => `http://127.0.0.1:${ports[turn++ % ports.length]}`;

    // Each tenant's orders 1001 and 1002: two tenants' order 1001 are two payments; asking again is the same one.
    const tenantOf = new Map<string, string>();
    for (const tenantId of TENANTS) {
      for (const orderId of ORDERS) {
        const order = { orderId, amount: orderId === '1001' ? '10.00' : '12.50', email: `buyer@${tenantId}.example`, tenantId };
        const created = await postCheckout(origin(), order);
        expect(created.status, await created.clone().text()).toBe(303);
        const again = await postCheckout(origin(), order);
        expect(again.headers.get('location'), `${again.status} ${await again.clone().text()}`).toBe(created.headers.get('location'));
        tenantOf.set(createdPaymentId(created), tenantId);
      }
    }
    expect(tenantOf.size).toBe(TENANTS.length * ORDERS.length);
    const unknown = await postCheckout(origin(), { orderId: '1001', amount: '1', tenantId: 'tenant-z' });
    expect({ status: unknown.status, body: await unknown.json() }).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });

    // Before anything is paid: a delivery signed with the platform's secret that says tenant A's
    // payment is paid and names tenant B's merchant. The engine decides from the service's read of
    // the payment (still unpaid, tenant A's), never from the body: nothing is fulfilled, for anyone.
    const [paymentOfA] = [...tenantOf].find(([, tenant]) => tenant === 'tenant-a')!;
    const created = (await (await fetch(`${sandboxUrl}/sandbox/events?type=payment.created`)).json()) as Array<{
      data: { id: string; amount: string; merchantId?: string };
    }>;
    const real = created.find((event) => event.data.id === paymentOfA)!;
    expect(real.data.merchantId).toBe(merchantOf['tenant-a']);
    // A payment.paid for tenant A's payment that names `merchantId`, signed with `secret`, sent to a serve.
    const forgePaid = (id: string, merchantId: string, secret: string) => {
      const data = { ...real.data, status: 'PAID', amountReceived: real.data.amount, merchantId };
      const body = JSON.stringify({ ...real, id, type: 'payment.paid', data });
      return fetch(`${origin()}/webhooks/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signWebhook({ id, body, secret }) },
        body,
      });
    };
    const forgedId = 'evt_forged_cross_tenant';
    const forged = await forgePaid(forgedId, merchantOf['tenant-b']!, creds.webhookSecret);
    expect(forged.status).toBe(200);
    await eventually(
      async () => {
        const shown = await run(['events', 'show', forgedId, '--json']);
        return shown.code === 0 && (JSON.parse(shown.stdout) as { run?: { status: string } }).run?.status === 'done' ? true : undefined;
      },
      60_000,
      300,
    );
    // A delivery signed with tenant B's own webhook secret, naming B's merchant, that says tenant A's
    // payment is paid: it verifies (B's secret speaks for B), but the confirmed read says the payment
    // is A's, so the engine ignores it: nothing stored for it but an entry in A's timeline.
    const forgedByB = 'evt_forged_with_tenant_b_secret';
    const sentByB = await forgePaid(forgedByB, merchantOf['tenant-b']!, ownSecret.webhookSecret);
    expect(sentByB.status).toBe(200);
    // B's secret never speaks for A: the same claim naming A's merchant is refused.
    const refused = await forgePaid('evt_forged_naming_a', merchantOf['tenant-a']!, ownSecret.webhookSecret);
    expect(refused.status).toBe(401);
    const reader = await openStore(store, { cwd: shop });
    try {
      await eventually(
        async () => {
          const timeline = await reader.listActivity({ subject: `payment:${paymentOfA}` });
          return timeline.some((entry) => entry.data.ignored === true && String(entry.data.error).includes(`speaks for merchant ${merchantOf['tenant-b']}`))
            ? true
            : undefined;
        },
        60_000,
        300,
      );
      expect((await reader.getResource('payment', paymentOfA))?.outcome ?? 'pending').toBe('pending');
    } finally {
      await reader.close();
    }

    const calls = () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as Call)
        : [];
    expect(calls()).toEqual([]);

    // Paid through the hosted page: it renders, and its button posts the deposit.
    for (const [id] of tenantOf) {
      const page = await fetch(`${sandboxUrl}/checkout/${id}`);
      expect(page.status).toBe(200);
      const amount = [...tenantOf.keys()].indexOf(id) % 2 === 0 ? '10.00' : '12.50';
      const deposit = await fetch(`${sandboxUrl}/sandbox/payments/${id}/deposit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount }),
      });
      expect(deposit.status).toBe(200);
    }

    // What webhooks dropped, reconcile finds: passes beside serve until every payment is fulfilled.
    let reconcilePasses = 0;
    await eventually(
      async () => {
        if (new Set(calls().map((call) => call.id)).size === tenantOf.size) return true;
        const pass = await run(['reconcile', '--older-than', '0', '--json']);
        expect(pass.code, pass.stderr).toBe(0);
        reconcilePasses += 1;
        return undefined;
      },
      180_000,
      500,
    );

    // tenant-b's deliveries were verified with its own secret: the sandbox never saw a refusal.
    const deliveries = (await (await fetch(`${sandboxUrl}/sandbox/deliveries`)).json()) as Array<{ statusCode: number | null; eventId: string }>;
    expect(deliveries.filter((delivery) => delivery.statusCode !== null && delivery.statusCode >= 400)).toEqual([]);

    // Every payment fulfilled exactly once, told its own tenant and merchant; nothing for B from the forgery.
    const final = calls();
    expect(final.filter((call) => call.outcome !== 'paid')).toEqual([]);
    const byPayment = new Map<string, Call[]>();
    for (const call of final) byPayment.set(call.id, [...(byPayment.get(call.id) ?? []), call]);
    expect([...byPayment.keys()].sort()).toEqual([...tenantOf.keys()].sort());
    for (const [id, tenantId] of tenantOf) {
      expect(
        byPayment.get(id)!.map((call) => ({ tenantId: call.tenantId, merchantId: call.merchantId })),
        id,
      ).toEqual([{ tenantId, merchantId: merchantOf[tenantId] }]);
    }
    const merchants = await run(['merchants', 'list', '--json']);
    expect((JSON.parse(merchants.stdout) as Array<{ tenantId: string }>).map((t) => t.tenantId)).toEqual([...TENANTS]);
    reportFigures(name, {
      serves,
      tenants: TENANTS.length,
      payments: tenantOf.size,
      handlerCalls: final.length,
      reconcilePasses,
      seed,
      seconds: Math.round((performance.now() - started) / 1000),
    });
  }
}
