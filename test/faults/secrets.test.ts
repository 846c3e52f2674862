import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { signWebhook } from '../../src/webhooks/index.js';
import { execCli, spawnCli, waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { createdPaymentId } from '../support/post-checkout.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { readCalls, RECORDING_HANDLERS, stopChild } from './support/hostile-serve.js';
import { reportFigures } from './support/report.js';
import { filesUnder, findSecrets, makeCanaries, sandboxSecrets } from './support/secrets-scan.js';
import { payment } from './support/service-standin.js';

// secrets. Every command runs at LOG_LEVEL=trace (pino's most verbose level;
// src/log reads LOG_LEVEL) with canary secrets planted where the CLI reads the merchant's
// configuration (environment and .env): serve, sandbox, reconcile, replay, doctor, trigger, the
// inspection commands, a failing delivery, a failing service call and misconfigurations with
// --verbose. Every stdout/stderr, every HTTP answer, every file of the stores, of the shop and of
// the sandbox's data dir is captured. No canary may appear, nor the base64 part of the whsec
// secret, nor the secrets the sandbox generated for its own accounts. Excluded, by design: the
// sandbox's credentials.json (contract.md 6: it holds the seeded keys) and, for the sandbox's own
// secrets only, its state file sandbox.json (the service's account records: it has to keep the
// signing secrets it checks requests with). Both are still scanned for the merchant canaries.

interface Captured {
  where: string;
  text: string;
}

const children: ChildProcess[] = [];
const servers: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => stopChild(child, 5_000)));
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await removeTempDirs();
});

describe('secrets never leave the configuration', () => {
  it('no canary key, signing secret, webhook secret (or its base64 part) or console token, and no sandbox-generated secret, in any output, file or error message at LOG_LEVEL=trace', async () => {
    const started = performance.now();
    const { values: canary, canaries } = makeCanaries();
    const shop = await tempDir('ck-secrets-shop-');
    const sandboxDir = await tempDir('ck-secrets-sandbox-');
    const goodStore = await tempDir('ck-secrets-good-');
    const canaryStore = await tempDir('ck-secrets-canary-');
    const dotenvDir = await tempDir('ck-secrets-dotenv-');
    const calls = join(shop, 'calls.jsonl');
    await writeFile(join(shop, 'fulfillment.mjs'), RECORDING_HANDLERS);
    const captured: Captured[] = [];
    const capture = (where: string, text: string) => captured.push({ where, text });

    /** A long-running process whose every byte of output is captured. */
    const start = (name: string, args: string[], env: NodeJS.ProcessEnv, cwd = shop) => {
      const child = spawnCli(args, { cwd, env });
      children.push(child);
      const out = { where: `${name} stdout`, text: '' };
      const err = { where: `${name} stderr`, text: '' };
      captured.push(out, err);
      child.stdout?.on('data', (chunk: Buffer) => (out.text += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (err.text += chunk.toString()));
      return { child, stderr: () => err.text };
    };
    const commands: Array<{ name: string; args: string[]; code: number | null }> = [];
    const codeOf = (name: string) => commands.find((command) => command.name === name)?.code;
    /** A command to its end; its output captured. */
    const run = async (name: string, args: string[], env: NodeJS.ProcessEnv, cwd = shop) => {
      const result = await execCli(args, { cwd, env });
      capture(`${name} (checkout-kit ${args.join(' ')}) exit ${result.code} stdout`, result.stdout);
      capture(`${name} (checkout-kit ${args.join(' ')}) stderr`, result.stderr);
      commands.push({ name, args, code: result.code });
      return result;
    };
    /** An HTTP exchange; the answer (status, headers, body) captured. */
    const http = async (name: string, url: string, init: RequestInit = {}) => {
      const response = await fetch(url, { redirect: 'manual', ...init });
      const text = await response.text();
      const headers: string[] = [];
      response.headers.forEach((value, key) => headers.push(`${key}: ${value}`));
      capture(`${name} HTTP answer`, `${response.status}\n${headers.join('\n')}\n\n${text}`);
      return { status: response.status, headers: response.headers, text };
    };

    const goodPort = await freePort();
    const canaryPort = await freePort();
    const goodUrl = `http://127.0.0.1:${goodPort}/webhooks/checkout`;
    const canaryUrl = `http://127.0.0.1:${canaryPort}/webhooks/checkout`;

    // The service, locally, delivering to both receivers (the canary one cannot verify its signature).
    const sandbox = start(
      'sandbox',
      ['sandbox', '--port', '0', '--data', sandboxDir, '--webhook-url', goodUrl, '--webhook-url', canaryUrl],
      { LOG_LEVEL: 'trace' },
      sandboxDir,
    );
    const [, sandboxUrl, credentialsPath] = await waitForLine(sandbox.child, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)\ncredentials: (\S+)\n/);
    const credentials = JSON.parse(readFileSync(credentialsPath!, 'utf8'));
    const generated = sandboxSecrets(credentials);
    const merchant = credentials.test.merchant;

    // The merchant's configuration with canaries everywhere a key goes.
    const canaryEnv = {
      CHECKOUT_BASE_URL: sandboxUrl!,
      ...canary,
      CHECKOUT_STORE: `file:${canaryStore}`,
      CHECKOUT_HANDLERS: join(shop, 'fulfillment.mjs'),
      HOSTILE_CALLS: calls,
      LOG_LEVEL: 'trace',
    };
    // A working configuration (the sandbox's keys), still with the partner keys and console token as canaries.
    const goodEnv = {
      ...canaryEnv,
      CHECKOUT_API_KEY: merchant.apiKey,
      CHECKOUT_SIGNING_SECRET: merchant.signingSecret,
      CHECKOUT_INVOICE_KEY: merchant.invoiceKey,
      CHECKOUT_WEBHOOK_SECRET: credentials.webhookSecret,
      CHECKOUT_STORE: `file:${goodStore}`,
    };

    const good = start('serve (sandbox keys)', ['serve', '--port', String(goodPort)], goodEnv);
    const bad = start('serve (canary keys)', ['serve', '--port', String(canaryPort)], canaryEnv);
    await Promise.all([waitForLine(good.child, /serve listening on/), waitForLine(bad.child, /serve listening on/)]);

    // A paid checkout through the working receiver: checkout, deposit, webhook, handler, return.
    const created = await http('good checkout', `http://127.0.0.1:${goodPort}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: 'o-good', amount: '12.50', email: 'buyer@example.com' }),
    });
    expect(created.status, created.text).toBe(303);
    const paymentId = createdPaymentId(created);
    await http('sandbox deposit', `${sandboxUrl}/sandbox/payments/${paymentId}/deposit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '12.50' }),
    });
    await eventually(() => (readCalls(calls).some((call) => call.id === paymentId) ? true : undefined), 20_000, 200);
    await http('good return', `http://127.0.0.1:${goodPort}/checkout/return?orderId=o-good`, { headers: { accept: 'application/json' } });

    // The canary receiver: a failing service call (the service does not know the canary keys) ...
    const refused = await http('canary checkout', `http://127.0.0.1:${canaryPort}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: 'o-canary', amount: '3.00', email: 'buyer@example.com' }),
    });
    await http('canary return', `http://127.0.0.1:${canaryPort}/checkout/return?orderId=o-canary`, { headers: { accept: 'application/json' } });
    // ... a delivery it verifies (signed with the canary secret) whose confirm read then fails ...
    const eventId = `evt_canary_${paymentId}`;
    const body = JSON.stringify({
      id: eventId,
      type: 'payment.paid',
      createdAt: new Date().toISOString(),
      environment: 'test',
      data: payment(paymentId, '12.50', '12.50'),
    });
    const accepted = await http('canary delivery', canaryUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signWebhook({ id: eventId, body, secret: canary.CHECKOUT_WEBHOOK_SECRET }) },
      body,
    });
    expect(accepted.status).toBe(200);
    // ... and failing deliveries: the sandbox's (signed with its own secret) and one with a wrong secret.
    const forged = await http('forged delivery', goodUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signWebhook({ id: eventId, body, secret: canary.CHECKOUT_WEBHOOK_SECRET }) },
      body,
    });
    expect(forged.status).toBe(401);
    await eventually(() => (/Webhook refused/.test(bad.stderr()) && /401|unauthorized/i.test(bad.stderr()) ? true : undefined), 20_000, 200);

    // A service that echoes what it was sent (the bearer key, the request signature) in its error
    // messages: whatever the client prints of them must come out redacted.
    const echo = Fastify({ forceCloseConnections: true });
    servers.push(echo);
    echo.all('/*', async (request, reply) =>
      reply.code(401).send({
        error: {
          code: 'unauthorized',
          message: `key ${request.headers.authorization} signature ${request.headers['x-request-signature']} not accepted for ${request.url}`,
        },
      }),
    );
    const echoUrl = await echo.listen({ host: '127.0.0.1', port: 0 });
    const echoEnv = { ...canaryEnv, CHECKOUT_BASE_URL: echoUrl };

    // Every other command, at trace level, on both configurations (a few at a time).
    const dotenv = Object.entries(canary)
      .map(([name, value]) => `${name}=${value}`)
      .join('\n');
    await writeFile(join(dotenvDir, '.env'), `${dotenv}\nCHECKOUT_BASE_URL=${sandboxUrl}\nCHECKOUT_STORE=file:${join(dotenvDir, 'store')}\n`);
    await mkdir(join(dotenvDir, 'store'));
    const batches: Array<Array<() => Promise<unknown>>> = [
      [
        () => run('reconcile good', ['reconcile', '--json', '--older-than', '0'], goodEnv),
        () => run('reconcile canary', ['reconcile', '--json', '--older-than', '0'], canaryEnv),
        () => run('doctor good', ['doctor', '--json'], goodEnv),
      ],
      [
        () => run('doctor canary', ['doctor'], canaryEnv),
        () => run('doctor .env', ['doctor', '--json'], { LOG_LEVEL: 'trace' }, dotenvDir),
        () => run('replay good', ['replay', '--to', goodUrl, '--all', '--json'], goodEnv),
      ],
      [
        () => run('replay canary', ['replay', '--to', canaryUrl, '--all'], canaryEnv),
        () => run('replay canary to good (refused)', ['replay', '--to', goodUrl, '--all', '--json'], canaryEnv),
        () => run('replay unreachable', ['--verbose', 'replay', '--to', 'http://127.0.0.1:9/webhooks/checkout', '--all'], canaryEnv),
      ],
      [
        () => run('trigger sample', ['trigger', 'payment.paid', '--to', canaryUrl, '--secret', canary.CHECKOUT_WEBHOOK_SECRET], canaryEnv),
        () => run('trigger scenario', ['trigger', 'paid', '--data', sandboxDir, '--json'], { LOG_LEVEL: 'trace' }),
        () => run('events good', ['events', 'list', '--json'], goodEnv),
      ],
      [
        () => run('events show', ['events', 'show', eventId], canaryEnv),
        () => run('payments good', ['payments', 'show', paymentId, '--json'], goodEnv),
        () => run('payments canary', ['payments', 'list'], canaryEnv),
      ],
      [
        () => run('runs canary', ['runs', '--json'], canaryEnv),
        () => run('dead letters', ['events', 'dead-letters', '--json'], canaryEnv),
        // Misconfigurations, with stack traces: a secret in the key's variable, mixed environments.
        () => run('secret as key', ['--verbose', 'reconcile'], { ...canaryEnv, CHECKOUT_API_KEY: canary.CHECKOUT_SIGNING_SECRET }),
      ],
      [
        () => run('doctor echo', ['doctor', '--json'], echoEnv),
        () => run('reconcile echo', ['reconcile', '--json', '--older-than', '0'], echoEnv),
        () => run('replay echo', ['--verbose', 'replay', '--to', `${echoUrl}/webhooks/checkout`, '--all'], echoEnv),
      ],
      [
        () => run('mixed environments', ['--verbose', 'serve'], { ...canaryEnv, CHECKOUT_API_KEY: canary.CHECKOUT_API_KEY.replace('_test_', '_live_') }),
        () =>
          run('whsec as api key', ['--verbose', 'doctor'], {
            ...canaryEnv,
            CHECKOUT_API_KEY: canary.CHECKOUT_WEBHOOK_SECRET,
            CHECKOUT_WEBHOOK_SECRET: canary.CHECKOUT_API_KEY,
          }),
      ],
    ];
    for (const batch of batches) await Promise.all(batch.map((task) => task()));
    // The failing confirm read has been retried by serve meanwhile; stop everything (shutdown logs too).
    await eventually(() => (/handler\(s\) failed|failed|401/i.test(bad.stderr()) ? true : undefined), 20_000, 200);
    await Promise.all(children.splice(0).map((child) => stopChild(child)));

    // Every file the processes wrote: stores, shop, sandbox data, the .env directory's store.
    const files = [
      ...filesUnder(goodStore).map((f) => ({ where: `good store ${f.path}`, text: f.text })),
      ...filesUnder(canaryStore).map((f) => ({ where: `canary store ${f.path}`, text: f.text })),
      ...filesUnder(join(dotenvDir, 'store')).map((f) => ({ where: `.env store ${f.path}`, text: f.text })),
      ...filesUnder(shop).map((f) => ({ where: `shop ${f.path}`, text: f.text })),
    ];
    const sandboxFiles = filesUnder(sandboxDir).filter((f) => f.path !== 'credentials.json');
    const texts = [...captured, ...files];
    const merchantFindings = findSecrets([...texts, ...sandboxFiles.map((f) => ({ where: `sandbox data ${f.path}`, text: f.text }))], canaries);
    const sandboxFindings = findSecrets(
      [...texts, ...sandboxFiles.filter((f) => f.path !== 'sandbox.json').map((f) => ({ where: `sandbox data ${f.path}`, text: f.text }))],
      generated,
    );
    const allText = texts.map((t) => t.text).join('\n');

    reportFigures('secrets', {
      processes: 3 + commands.length,
      outputsScanned: captured.length,
      filesScanned: files.length + sandboxFiles.length,
      bytesScanned: texts.reduce((sum, t) => sum + t.text.length, 0) + sandboxFiles.reduce((sum, f) => sum + f.text.length, 0),
      logLines: (allText.match(/"level":\d+/g) ?? []).length,
      traceOrDebugLines: (allText.match(/"level":(10|20)\b/g) ?? []).length,
      canaries: canaries.length,
      sandboxSecrets: generated.length,
      redactedMarkers: (allText.match(/\[redacted\]/g) ?? []).length,
      canaryCheckoutStatus: refused.status,
      merchantCanaryHits: merchantFindings.length,
      sandboxSecretHits: sandboxFindings.length,
      seconds: Math.round((performance.now() - started) / 1000),
    });

    // The failing paths really ran: the service refused the canary keys, deliveries were refused,
    // the misconfigurations stopped with exit 2.
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(allText).toMatch(/Webhook refused/);
    expect(codeOf('secret as key'), 'a secret in CHECKOUT_API_KEY stops reconcile').toBe(2);
    expect(codeOf('mixed environments'), 'live and test keys together stop serve').toBe(2);
    expect(codeOf('whsec as api key'), 'doctor reports the misplaced keys as failed checks').toBe(1);
    expect(codeOf('reconcile canary'), 'reconcile with keys the service refuses reports failures').toBe(1);
    expect(codeOf('reconcile echo')).toBe(1);
    // The echoing service did send the keys back, and they were redacted.
    expect(captured.find((c) => c.where.startsWith('doctor echo') && c.where.endsWith('stdout'))?.text).toMatch(/key Bearer \[redacted\]/);
    expect(existsSync(calls)).toBe(true);

    expect(merchantFindings.map((f) => `${f.canary} (${f.needle}) in ${f.where}: …${f.context}…`)).toEqual([]);
    expect(sandboxFindings.map((f) => `${f.canary} (${f.needle}) in ${f.where}: …${f.context}…`)).toEqual([]);
  });
});
