/**
 * The README's five-minute tutorial, as real processes: `init`, the sandbox with `--write-env`, the
 * scaffold's server, a checkout paid at the sandbox. The test types no credential: the sandbox
 * writes them into the shop's .env and the server reads them from there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { simulateStep } from '../../src/devtools/sandbox-api.js';
import { execCli, spawnCli, stopProcess, TSX_LOADER, waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { linkKit } from '../support/scaffold.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) await stopProcess(child);
  await removeTempDirs();
});

/** A child process whose output is kept, both streams together, for waiting on and for failure messages. */
function started(child: ChildProcess): { child: ChildProcess; output: () => string } {
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** The shop server's JSON log lines saying an order was paid (fulfillment.ts's `paid` handler). */
const paidLines = (log: string, orderId: string) =>
  log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; orderId?: string })
    .filter((line) => line.msg === 'order paid' && line.orderId === orderId);

describe('the five-minute tutorial', () => {
  it('from init to a paid order, fulfilled once, with no value typed by hand', async () => {
    const root = await tempDir('ck-tutorial-');
    const shop = join(root, 'shop');
    const initialised = await execCli(['init', 'shop'], { cwd: root });
    expect(initialised.code, initialised.stderr).toBe(0);
    expect(initialised.stdout).not.toMatch(/cp \.env|fill \.env|credentials\.json:/);
    // `npm install`, without the network: checkout-kit and its packages from this repository.
    const tsconfig = await linkKit(shop);

    // `npx checkout-kit sandbox --webhook-url http://127.0.0.1:3000/webhooks/checkout --write-env`, on free ports.
    const port = await freePort();
    const sandbox = started(spawnCli(['sandbox', '--port', '0', '--webhook-url', `http://127.0.0.1:${port}/webhooks/checkout`, '--write-env'], { cwd: shop }));
    await waitForLine(sandbox.child, /^env: created .*\.env /m);
    expect(existsSync(join(shop, '.env'))).toBe(true);

    // `npm run dev` (tsx, without watch): the server reads .env; PORT in its environment wins over .env's 3000.
    const server = started(
      spawn(process.execPath, ['--import', TSX_LOADER, 'src/server.ts'], {
        cwd: shop,
        env: { PATH: process.env.PATH, TSX_TSCONFIG_PATH: tsconfig, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const origin = `http://127.0.0.1:${port}`;
    await eventually(async () => ((await fetch(origin).catch(() => undefined))?.ok ? true : undefined), 60_000, 100).catch((error: Error) => {
      throw new Error(`${error.message}: the shop did not answer; its output:\n${server.output()}`);
    });

    // Order something: the shop creates the payment and sends the buyer to the sandbox's checkout page.
    const orderId = 'order-tutorial';
    const created = await postCheckout(origin, { orderId, amount: '25.00' });
    expect(created.status, await created.clone().text()).toBe(303);
    const checkoutUrl = new URL(created.headers.get('location')!);
    const paymentId = createdPaymentId(created);

    // Pay it in full at the sandbox (what the page's Pay buttons call).
    const paid = await simulateStep(checkoutUrl.origin, { kind: 'payment', id: paymentId }, { action: 'deposit', amount: '25.00' });
    expect(paid.status).toBe('PAID');

    // The sandbox delivers payment.paid, the shop accepts it (the webhook secret matched) and its
    // handler runs after a confirm read (the API key and signing secret matched).
    const failure = () => `\nshop:\n${server.output()}\nsandbox:\n${sandbox.output()}`;
    const delivered = await eventually(async () => {
      const deliveries = (await (await fetch(`${checkoutUrl.origin}/sandbox/deliveries`)).json()) as Array<{
        type: string;
        delivered: boolean;
        statusCode: number | null;
      }>;
      return deliveries.find((delivery) => delivery.type === 'payment.paid' && delivery.delivered);
    }, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}: payment.paid was not delivered${failure()}`);
    });
    expect(delivered.statusCode).toBe(200);
    await eventually(() => (paidLines(server.output(), orderId).length > 0 ? true : undefined), 60_000).catch((error: Error) => {
      throw new Error(`${error.message}: the paid handler did not run${failure()}`);
    });

    // The buyer's return confirms it too, and the handler has still run once.
    const returned = await fetch(`${origin}/checkout/return?orderId=${orderId}`, { headers: { accept: 'application/json' } });
    expect(await returned.json()).toMatchObject({ orderId, state: 'paid', resourceId: paymentId, confirmed: true });
    expect(paidLines(server.output(), orderId), failure()).toHaveLength(1);
    expect(sandbox.output(), 'no delivery refused').not.toContain('webhook refused');
  }, 180_000);
});
