import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError, redact } from '../../src/errors/index.js';
import { TEST_KEYS } from '../support/fixtures.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const base = {
  CHECKOUT_BASE_URL: 'https://api.checkout.test/',
  CHECKOUT_API_KEY: TEST_KEYS.apiKey,
  CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret,
  CHECKOUT_INVOICE_KEY: TEST_KEYS.invoiceKey,
};

const REPO = fileURLToPath(new URL('../..', import.meta.url));

describe('loadConfig', () => {
  it('CHECKOUT_REDIRECT_HOSTS keeps hosts as the redirect guard compares them, and refuses a URL or a path naming the host to give', () => {
    const hosts = (value: string) => loadConfig({ env: { ...base, CHECKOUT_REDIRECT_HOSTS: value }, dotenv: false }).redirectHosts;
    expect(hosts('Pay.Example.com, pay.example.com:443 127.0.0.1:4010,bücher.de')).toEqual([
      'pay.example.com',
      'pay.example.com',
      '127.0.0.1:4010',
      'xn--bcher-kva.de',
    ]);
    for (const [entry, meant] of [
      ['https://pay.example.com/checkout', 'pay.example.com'],
      ['http://127.0.0.1:4010', '127.0.0.1:4010'],
      ['pay.example.com/c', 'pay.example.com'],
      ['user@pay.example.com', 'pay.example.com'],
    ]) {
      expect(() => hosts(`shop.example,${entry}`), entry).toThrow(
        new ConfigError(`CHECKOUT_REDIRECT_HOSTS entry "${entry}" is not a host: give ${meant} (a host such as pay.example.com, with :port when not 443).`),
      );
    }
  });

  it("takes env as a plain record, also where process.env's type requires NODE_ENV, as Next.js declares it (loadConfig, the clients' fromEnv)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ck-env-types-'));
    dirs.push(dir);
    const consumer = join(dir, 'consumer.ts');
    await writeFile(
      consumer,
      `import { loadConfig } from '${REPO}src/config/index.js';
import { CheckoutClient, PartnerClient } from '${REPO}src/client/index.js';
declare global {
  namespace NodeJS {
    interface ProcessEnv {
      readonly NODE_ENV: 'development' | 'production' | 'test';
    }
  }
}
loadConfig({ env: { CHECKOUT_WEBHOOK_SECRET: 'whsec_aGVsbG8=', CHECKOUT_STORE: 'memory:' }, dotenv: false });
CheckoutClient.fromEnv({ env: { CHECKOUT_BASE_URL: 'https://api.checkout.test' }, dotenv: false });
PartnerClient.fromEnv({ env: { CHECKOUT_BASE_URL: 'https://api.checkout.test' }, dotenv: false });
loadConfig({ env: process.env });
`,
    );
    const program = ts.createProgram([consumer], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(REPO, 'node_modules/@types')],
    });
    const file = program.getSourceFile(consumer)!;
    const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
    expect(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (name) => name, getCurrentDirectory: () => dir, getNewLine: () => '\n' })).toBe('');
  }, 120_000);

  it('reads every variable with its default', () => {
    const config = loadConfig({
      env: { ...base, CHECKOUT_WEBHOOK_SECRET: 'whsec_aGVsbG8=, whsec_d29ybGQ=' },
      dotenv: false,
    });
    expect(config).toMatchObject({
      baseUrl: 'https://api.checkout.test',
      environment: 'test',
      webhookSecrets: ['whsec_aGVsbG8=', 'whsec_d29ybGQ='],
      store: 'file:.checkout-kit',
      redirectHosts: ['api.checkout.test'],
    });
  });

  it('reads .env from the working directory; real variables win', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ck-env-'));
    dirs.push(dir);
    await writeFile(join(dir, '.env'), `CHECKOUT_BASE_URL=https://from-dotenv.test\nCHECKOUT_STORE=file:data\nCHECKOUT_HANDLERS=./my-handlers.mjs\n`);
    const config = loadConfig({ cwd: dir, env: { CHECKOUT_STORE: 'file:override' } });
    expect(config.baseUrl).toBe('https://from-dotenv.test');
    expect(config.store).toBe('file:override');
    expect(config.handlers).toBe(join(dir, 'my-handlers.mjs'));
  });

  it.each([
    [{ CHECKOUT_INVOICE_KEY: 'live_abcdefabcdefabcdef' }, /one environment/],
    [{ CHECKOUT_API_KEY: TEST_KEYS.partnerApiKey }, /merchant key/],
    [{ CHECKOUT_SIGNING_SECRET: 'svc_ps_wrongkind' }, /merchant secret/],
    [{ CHECKOUT_INVOICE_KEY: TEST_KEYS.apiKey }, /^CHECKOUT_INVOICE_KEY should be an invoice key \(test_…\) but is a key starting "svc_mk_test_"\./],
    [{ CHECKOUT_WEBHOOK_SECRET: 'not-a-secret' }, /webhook secret/],
    [{ CHECKOUT_BASE_URL: 'not a url' }, /not a URL/],
    [{ CHECKOUT_STORE: 'mysql://x' }, /is none of file:<dir>, postgres:\/\/… or memory: \(tests only\)/],
    [{ PORT: 'eighty' }, /not a port/],
  ])('refuses %j', (override, message) => {
    expect(() => loadConfig({ env: { ...base, ...override }, dotenv: false })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { ...base, ...override }, dotenv: false })).toThrow(message);
  });

  it('reads CHECKOUT_WEBHOOK_SCHEME in short or JSON form; other schemes take any secret', () => {
    expect(loadConfig({ env: base, dotenv: false }).webhookScheme).toEqual({ kind: 'standard-webhooks' });
    expect(loadConfig({ env: { ...base, CHECKOUT_WEBHOOK_SCHEME: 'stripe-style:x-sig' }, dotenv: false }).webhookScheme).toEqual({
      kind: 'stripe-style',
      header: 'x-sig',
    });
    const hmac = loadConfig({
      env: { ...base, CHECKOUT_WEBHOOK_SCHEME: 'hmac:x-hub-signature-256:sha256:hex:sha256=', CHECKOUT_WEBHOOK_SECRET: 'plain-shared-secret' },
      dotenv: false,
    });
    expect(hmac.webhookScheme).toEqual({ kind: 'hmac', header: 'x-hub-signature-256', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' });
    expect(hmac.webhookSecrets).toEqual(['plain-shared-secret']);
    const json = '{"kind":"hmac","header":"x-signature","encoding":"base64"}';
    expect(loadConfig({ env: { ...base, CHECKOUT_WEBHOOK_SCHEME: json }, dotenv: false }).webhookScheme).toEqual({
      kind: 'hmac',
      header: 'x-signature',
      encoding: 'base64',
    });
    expect(() => loadConfig({ env: { ...base, CHECKOUT_WEBHOOK_SCHEME: 'rot13' }, dotenv: false })).toThrow(/CHECKOUT_WEBHOOK_SCHEME "rot13" is not a scheme/);
    expect(() => loadConfig({ env: { ...base, CHECKOUT_WEBHOOK_SCHEME: 'hmac' }, dotenv: false })).toThrow(ConfigError);
  });

  it('reads the outcome rules: CHECKOUT_UNDERPAY_TOLERANCE as an amount, a percent or both; CHECKOUT_STATUS_MAP replaces the default map', () => {
    const rules = (env: Record<string, string>) => loadConfig({ env: { ...base, ...env }, dotenv: false }).outcomeRules;
    expect(rules({})).toEqual({ underpayTolerance: undefined, statusMap: { EXPIRED: 'closed' } });
    expect(rules({ CHECKOUT_UNDERPAY_TOLERANCE: '0.01' }).underpayTolerance).toEqual({ absolute: '0.01' });
    expect(rules({ CHECKOUT_UNDERPAY_TOLERANCE: '1%' }).underpayTolerance).toEqual({ percent: '1' });
    expect(rules({ CHECKOUT_UNDERPAY_TOLERANCE: '0.01, 0.5%' }).underpayTolerance).toEqual({ absolute: '0.01', percent: '0.5' });
    expect(rules({ CHECKOUT_UNDERPAY_TOLERANCE: '1% 0.000000000000000001' }).underpayTolerance).toEqual({ absolute: '0.000000000000000001', percent: '1' });
    expect(rules({ CHECKOUT_STATUS_MAP: 'EXPIRED=closed,CONFIRMING=hold' }).statusMap).toEqual({ EXPIRED: 'closed', CONFIRMING: 'hold' });
    expect(rules({ CHECKOUT_STATUS_MAP: 'CANCELLED=closed' }).statusMap).toEqual({ CANCELLED: 'closed' });
  });

  it.each([
    [{ CHECKOUT_UNDERPAY_TOLERANCE: '1e-2' }, /CHECKOUT_UNDERPAY_TOLERANCE "1e-2" is not a tolerance \("1e-2" is not a plain decimal amount/],
    [{ CHECKOUT_UNDERPAY_TOLERANCE: '-0.01' }, /not a plain decimal amount/],
    [{ CHECKOUT_UNDERPAY_TOLERANCE: 'one%' }, /"one%" is not a plain decimal followed by %/],
    [{ CHECKOUT_UNDERPAY_TOLERANCE: '100.0000000000000000001%' }, /not a plain decimal followed by %/],
    [{ CHECKOUT_UNDERPAY_TOLERANCE: '100.5%' }, /100.5% is more than 100%/],
    [{ CHECKOUT_UNDERPAY_TOLERANCE: '0.01,0.02' }, /at most one amount and one percent/],
    [{ CHECKOUT_UNDERPAY_TOLERANCE: '1%,2%' }, /at most one amount and one percent/],
    [{ CHECKOUT_UNDERPAY_TOLERANCE: '0.01,1%,2%' }, /more than two parts/],
    [{ CHECKOUT_UNDERPAY_TOLERANCE: ',' }, /is empty/],
    [{ CHECKOUT_STATUS_MAP: 'EXPIRED=gone' }, /CHECKOUT_STATUS_MAP "EXPIRED=gone" is not a status map \(a meaning must be one of closed, hold\)/],
    [{ CHECKOUT_STATUS_MAP: 'PAID=paid' }, /a meaning must be one of closed, hold/],
    [{ CHECKOUT_STATUS_MAP: 'EXPIRED' }, /each entry must be STATUS=meaning/],
    [{ CHECKOUT_STATUS_MAP: 'EXPIRED=closed,EXPIRED=hold' }, /mapped twice/],
  ])('refuses the outcome rule %j with a clear message', (override, message) => {
    expect(() => loadConfig({ env: { ...base, ...override }, dotenv: false })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { ...base, ...override }, dotenv: false })).toThrow(message);
  });

  it('refuses a CHECKOUT_CONSOLE_TOKEN shorter than 24 characters, never echoing it', () => {
    expect(() => loadConfig({ env: { ...base, CHECKOUT_CONSOLE_TOKEN: 'short' }, dotenv: false })).toThrow(
      new ConfigError('CHECKOUT_CONSOLE_TOKEN is 5 characters: use a random string of at least 24, e.g. `openssl rand -base64 32`.'),
    );
    const token = 'a'.repeat(24);
    expect(loadConfig({ env: { ...base, CHECKOUT_CONSOLE_TOKEN: token }, dotenv: false }).consoleToken).toBe(token);
  });

  it('reads CHECKOUT_MAX_RPS and CHECKOUT_DISPATCH_CONCURRENCY, and refuses what is not a positive number', () => {
    expect(loadConfig({ env: base, dotenv: false })).toMatchObject({ maxRps: undefined, dispatchConcurrency: undefined });
    expect(loadConfig({ env: { ...base, CHECKOUT_MAX_RPS: '0.5', CHECKOUT_DISPATCH_CONCURRENCY: '32' }, dotenv: false })).toMatchObject({
      maxRps: 0.5,
      dispatchConcurrency: 32,
    });
    for (const [variable, value] of [
      ['CHECKOUT_MAX_RPS', '0'],
      ['CHECKOUT_MAX_RPS', '-3'],
      ['CHECKOUT_MAX_RPS', 'fast'],
      ['CHECKOUT_DISPATCH_CONCURRENCY', '2.5'],
      ['CHECKOUT_DISPATCH_CONCURRENCY', '0'],
    ] as const) {
      expect(() => loadConfig({ env: { ...base, [variable]: value }, dotenv: false })).toThrow(new RegExp(`^${variable} "${value}" is not a positive`));
    }
  });

  it('never puts a secret in a configuration error and registers secrets for redaction', () => {
    const secret = 'svc_ms_SECRETVALUEthatmustnotleak';
    const error = (() => {
      try {
        loadConfig({ env: { ...base, CHECKOUT_API_KEY: secret }, dotenv: false });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toMatch(/should be a merchant key/);
    expect(error?.message).not.toContain(secret);
    expect(redact(`leaked ${TEST_KEYS.signingSecret}`)).toBe('leaked [redacted]');
  });
});
