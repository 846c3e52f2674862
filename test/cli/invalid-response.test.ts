import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createOnceKey } from '../../src/domain/idempotency.js';
import { samplePayment, TEST_KEYS } from '../support/fixtures.js';
import { OFF_SPEC_ANSWERS, offSpecService } from '../support/off-spec-service.js';
import { execCli, spawnCli, terminateAll, waitForLine } from '../support/cli.js';
import { eventually, freePort, listenOnLoopback } from '../support/ports.js';
import { parsePrometheusStrict, sampleValue } from '../support/prometheus.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

const children: Array<ReturnType<typeof spawnCli>> = [];
const services: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await terminateAll(children);
  await Promise.all(services.splice(0).map((service) => service.close()));
  await removeTempDirs();
});

const WEBHOOK_SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

/** The service on 127.0.0.1, creating every payment with 201 and a checkoutUrl that is not an http(s) URL. */
async function malformedService(): Promise<string> {
  const service = Fastify();
  services.push(service);
  service.post('/v1/payments', async (_request, reply) => reply.code(201).send(samplePayment({ checkoutUrl: 'javascript:alert(1)' })));
  return `http://127.0.0.1:${await listenOnLoopback(service)}`;
}

describe('a service answer that does not match the spec, in the processes a merchant runs', () => {
  it('serve: POST /checkout answers 502 invalid_response, logs a warning naming the operation and the field, counts it in /metrics', async () => {
    const serviceUrl = await malformedService();
    const dir = await tempDir('ck-invalid-response-');
    await writeFile(join(dir, 'fulfillment.mjs'), 'export default { async paid() {} };\n');
    const port = await freePort();
    const env = {
      CHECKOUT_BASE_URL: serviceUrl,
      CHECKOUT_API_KEY: TEST_KEYS.apiKey,
      CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret,
      CHECKOUT_WEBHOOK_SECRET: WEBHOOK_SECRET,
      LOG_LEVEL: 'warn',
    };
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env });
    children.push(serve);
    let stderr = '';
    serve.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitForLine(serve, /listening on/);
    const base = `http://127.0.0.1:${port}`;

    const answer = await fetch(`${base}/checkout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: 'o-1', amount: '10.00' }),
    });
    expect(answer.status).toBe(502);
    expect(answer.headers.get('location')).toBeNull();
    expect(await answer.json()).toEqual({ error: { code: 'invalid_response', message: expect.stringMatching(/payments\.create .*\(checkoutUrl\)/) } });

    const metrics = parsePrometheusStrict(await (await fetch(`${base}/metrics`)).text());
    expect(sampleValue(metrics, 'checkout_kit_service_requests_total', { operation: 'payments.create', status: 'invalid_response' })).toBe(1);
    const lines = () =>
      stderr
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { level: number; msg: string; operation?: string; fields?: string[] });
    const warning = await eventually(() => lines().find((line) => line.level === 40 && line.operation === 'payments.create'));
    expect(warning).toMatchObject({
      fields: ['checkoutUrl'],
      msg: expect.stringMatching(/^payments\.create: the service's 201 answer does not match the spec \(.*\): checkoutUrl: /),
    });
    expect(lines().filter((line) => line.level >= 50)).toEqual([]);
  });

  it('a command: one line naming the operation and the field, exit 1', async () => {
    const serviceUrl = await malformedService();
    const dir = await tempDir('ck-invalid-response-cli-');
    const keys = { apiKey: TEST_KEYS.apiKey, signingSecret: TEST_KEYS.signingSecret };
    const environment = { partner: keys, merchant: { ...keys, merchantId: samplePayment().id, invoiceKey: TEST_KEYS.invoiceKey } };
    await writeFile(
      join(dir, 'credentials.json'),
      JSON.stringify({ baseUrl: serviceUrl, webhookSecret: WEBHOOK_SECRET, test: environment, live: environment }),
    );

    const result = await execCli(['trigger', 'paid', '--data', dir], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(
        /^checkout-kit: payments\.create: the service's 201 answer does not match the spec \(POST http:\/\/127\.0\.0\.1:\d+\/v1\/payments\): checkoutUrl: expected an absolute http\(s\) URL$/,
      ),
    ]);
  });

  it("merchants onboard, answered 400 without the spec's error object: one line, exit 1, the tenant's try kept; the next run creates the one merchant", async () => {
    const service = await offSpecService();
    services.push(service);
    const cwd = await tempDir('ck-off-spec-onboard-');
    const env = {
      CHECKOUT_BASE_URL: service.url,
      CHECKOUT_PARTNER_API_KEY: TEST_KEYS.partnerApiKey,
      CHECKOUT_PARTNER_SIGNING_SECRET: TEST_KEYS.partnerSigningSecret,
      CHECKOUT_STORE: 'file:./store',
      LOG_LEVEL: 'warn',
    };
    const onboard = ['merchants', 'onboard', '--tenant', 'shop-off', '--name', 'Shop', '--email', 'shop@example.com'];
    const key = createOnceKey('merchant', 'shop-off');
    const tenants = async () => JSON.parse((await execCli(['merchants', 'list', '--json'], { cwd, env })).stdout) as Array<Record<string, unknown>>;

    service.offSpec = OFF_SPEC_ANSWERS.html;
    const refused = await execCli(onboard, { cwd, env });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr.split('\n').filter(Boolean)).toEqual([
      `checkout-kit: merchants.create failed: the service's 400 answer (Bad Request) is not the spec's error object: the service's fault, not the request's (POST ${service.url}/v1/partner/merchants, Idempotency-Key ${key})`,
    ]);
    expect(await tenants()).toMatchObject([{ tenantId: 'shop-off', status: 'sending', number: 1, idempotencyKey: key }]);

    service.offSpec = undefined;
    const onboarded = await execCli(onboard, { cwd, env });
    expect(onboarded, onboarded.stderr).toMatchObject({ code: 0 });
    expect(service.merchants.size).toBe(1);
    expect(service.creates.map((call) => call.idempotencyKey)).toEqual([key, key]);
    expect(await tenants()).toMatchObject([{ tenantId: 'shop-off', status: 'created', merchantId: service.merchants.get(key)!.merchantId }]);
  });
});
