import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCaptures, type CapturedDelivery, type ProbeReport } from '../../src/devtools/index.js';
import { decodeWhsecSecret } from '../../src/webhooks/schemes/decode-secret.js';
import { createVerifier, signWebhook, type WebhookScheme } from '../../src/webhooks/index.js';
import { resolveScheme } from '../../src/webhooks/schemes/resolve-scheme.js';
import { execCli, runCli, spawnCli, waitForLine } from '../support/cli.js';
import { eventually } from '../support/ports.js';
import { SECRET } from '../webhooks/helpers.js';
import { removeTempDirs, tempDir } from './helpers.js';

const TWO_DAYS = 2 * 86_400;
const now = () => Math.floor(Date.now() / 1000);

interface Case {
  name: string;
  scheme: WebhookScheme;
  secret: string;
  /** The scheme the probe should print (explicit header and defaults). */
  expected: WebhookScheme;
  timestampHeader: string | undefined;
}

const CASES: Case[] = [
  {
    name: 'standard-webhooks',
    scheme: { kind: 'standard-webhooks' },
    secret: SECRET,
    expected: { kind: 'standard-webhooks' },
    timestampHeader: 'webhook-timestamp',
  },
  {
    name: 'stripe-style-custom-header',
    scheme: { kind: 'stripe-style', header: 'X-Checkout-Signature' },
    secret: 'sk_test_signing_0123456789',
    expected: { kind: 'stripe-style', header: 'x-checkout-signature' },
    timestampHeader: 'x-checkout-signature t=',
  },
  {
    name: 'stripe-style-whsec-as-text',
    scheme: { kind: 'stripe-style' },
    secret: SECRET,
    expected: { kind: 'stripe-style', header: 'stripe-signature' },
    timestampHeader: 'stripe-signature t=',
  },
  {
    name: 'hmac-sha256-hex-prefixed',
    scheme: { kind: 'hmac', header: 'x-hub-signature-256', prefix: 'sha256=' },
    secret: 'gh_secret_0123456789',
    expected: { kind: 'hmac', header: 'x-hub-signature-256', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' },
    timestampHeader: undefined,
  },
  {
    name: 'hmac-sha512-base64',
    scheme: { kind: 'hmac', header: 'x-signature', algorithm: 'sha512', encoding: 'base64' },
    secret: SECRET,
    expected: { kind: 'hmac', header: 'x-signature', algorithm: 'sha512', encoding: 'base64' },
    timestampHeader: undefined,
  },
  {
    name: 'hmac-sha256-base64',
    scheme: { kind: 'hmac', header: 'x-webhook-hmac', algorithm: 'sha256', encoding: 'base64' },
    secret: 'shpss_0123456789abcdef',
    expected: { kind: 'hmac', header: 'x-webhook-hmac', algorithm: 'sha256', encoding: 'base64' },
    timestampHeader: undefined,
  },
];

let cwd: string;
let captureDir: string;
let captureUrl: string;
let capture: ChildProcess;
/** Per case: a folder holding only its captures. */
const dirs = new Map<string, string>();
/** What was sent, to compare with what was captured. */
const sent: Array<{ path: string; body: Buffer; headers: Record<string, string> }> = [];

async function send(path: string, body: Buffer | string, headers: Record<string, string>) {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const response = await fetch(`${captureUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: new Uint8Array(bytes),
  });
  expect(response.status).toBe(200);
  sent.push({ path, body: bytes, headers });
}

function eventBody(n: number): string {
  return `{"id":"evt_${n}","type":"payment.paid","createdAt":"2025-01-02T03:04:05.000Z","data":{"amount":"25.00","memo":"über ✓"}}`;
}

async function probe(dir: string, secret: string) {
  const result = await runCli(['probe-signature', '--secret', secret, '--dir', dir, '--json'], { cwd });
  return { ...result, report: result.stdout ? (JSON.parse(result.stdout) as ProbeReport) : undefined };
}

beforeAll(async () => {
  cwd = await tempDir();
  captureDir = join(cwd, 'captures');
  capture = spawnCli(['capture', '--port', '0', '--out', captureDir], { cwd, env: { CHECKOUT_API_KEY: 'svc_mk_test_abcdef0123456789' } });
  captureUrl = (await waitForLine(capture, /capture listening on (http:\/\/127\.0\.0\.1:\d+),/))[1]!;

  let n = 0;
  for (const c of CASES) {
    // One fresh delivery and one signed two days ago: the probe must ignore tolerance.
    for (const timestamp of [now(), now() - TWO_DAYS]) {
      const body = eventBody((n += 1));
      await send(`/${c.name}`, body, { 'x-unrelated': 'abc', ...signWebhook({ id: `msg_${n}`, timestamp, body, secret: c.secret, scheme: c.scheme }) });
    }
  }
  // Stripe-style keyed with the decoded whsec bytes: found, but not what the receiver's scheme does.
  for (const timestamp of [now(), now() - 60]) {
    const body = eventBody((n += 1));
    const headers = resolveScheme({ kind: 'stripe-style', header: 'x-sig' }).sign({ id: 'unused', timestamp, body, keys: [decodeWhsecSecret(SECRET)] });
    await send('/stripe-decoded-key', body, headers);
  }
  // Arbitrary bytes (not UTF-8) with a form content type: kept exactly.
  await send('/raw?x=1', Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x0a]), { 'content-type': 'application/x-www-form-urlencoded' });

  const { captures } = await readCaptures(captureDir);
  for (const captured of captures) {
    const dir = join(cwd, 'by-case', captured.url.slice(1).replace(/\?.*/, ''));
    await mkdir(dir, { recursive: true });
    await copyFile(captured.file, join(dir, basename(captured.file)));
    dirs.set(captured.url, dir);
  }
});

afterAll(async () => {
  if (capture.exitCode === null) {
    capture.kill('SIGTERM');
    await once(capture, 'exit');
  }
  await removeTempDirs();
});

describe('capture', () => {
  it('writes each delivery with its exact bytes, path and every header', async () => {
    const { captures, skipped } = await readCaptures(captureDir);
    expect(skipped).toEqual([]);
    expect(captures).toHaveLength(sent.length);
    const byPath = (path: string) => captures.filter((c: CapturedDelivery) => c.url === path);
    for (const item of sent) {
      const match = byPath(item.path).find((c) => c.body.equals(item.body));
      expect(match, item.path).toBeDefined();
      for (const [name, value] of Object.entries(item.headers)) expect(match!.headers[name.toLowerCase()]).toBe(value);
    }
    const raw = byPath('/raw?x=1')[0]!;
    expect([...raw.body]).toEqual([0xff, 0xfe, 0x00, 0x7b, 0x0a]);
    expect(raw.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const file = JSON.parse(await readFile(raw.file, 'utf8'));
    expect(file).toMatchObject({ version: 1, method: 'POST', url: '/raw?x=1', bodyBase64: '//4Aewo=', bodyBytes: 5 });
  });

  it('stops cleanly on SIGTERM', async () => {
    capture.kill('SIGTERM');
    const [code] = await once(capture, 'exit');
    expect(code).toBe(0);
  });

  it('refuses to run with live keys (exit 2), before listening', async () => {
    const result = await runCli(['capture', '--port', '0', '--out', join(cwd, 'never')], { cwd, env: { CHECKOUT_API_KEY: 'svc_mk_live_abcdef0123456789' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^checkout-kit: capture runs in the test environment only.*live/);
    await expect(readdir(join(cwd, 'never'))).rejects.toThrow(/ENOENT/);
  });
});

describe('capture where captures cannot be written', () => {
  it('refuses an --out that is a file (exit 2, one line) before listening', async () => {
    const file = join(cwd, 'a-file');
    await writeFile(file, 'x');
    const env = { CHECKOUT_API_KEY: 'svc_mk_test_abcdef0123456789' };
    for (const out of [file, join(file, 'below')]) {
      expect(await execCli(['capture', '--port', '0', '--out', out], { cwd, env })).toEqual({
        code: 2,
        stdout: '',
        stderr: `checkout-kit: --out ${out} cannot hold captures (it, or a folder above it, is a file): name a folder you can write to.\n`,
      });
    }
  });

  it('says on its terminal that a delivery could not be saved, as well as answering it 500', async () => {
    const out = join(cwd, 'going');
    const child = spawnCli(['capture', '--port', '0', '--out', out], { cwd, env: { CHECKOUT_API_KEY: 'svc_mk_test_abcdef0123456789' } });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const url = (await waitForLine(child, /capture listening on (http:\/\/127\.0\.0\.1:\d+),/))[1]!;
      await rm(out, { recursive: true });
      await writeFile(out, 'now a file');
      const response = await fetch(`${url}/lost`, { method: 'POST', body: '{}' });
      expect(response.status).toBe(500);
      await eventually(async () => (stderr.includes('could not save') ? true : undefined), 30_000, 50);
      expect(stderr).toMatch(new RegExp(`^checkout-kit: could not save POST /lost in ${out.replaceAll('/', '\\/')}: .*EEXIST`, 'm'));
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});

describe('probe-signature', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('finds %s, ignoring timestamp tolerance', async (name, c) => {
    const dir = dirs.get(`/${name}`)!;
    const { code, report, stderr } = await probe(dir, c.secret);
    expect(code, stderr).toBe(0);
    expect(report!.captures).toBe(2);
    const [best] = report!.matches;
    expect(best).toMatchObject({ scheme: c.expected, usable: true, verified: 2, total: 2 });
    expect(best!.timestampHeader).toBe(c.timestampHeader);
    if (c.timestampHeader) expect(best!.signedAgeSeconds!.max).toBeGreaterThanOrEqual(TWO_DAYS);
    else expect(best!.signedAgeSeconds).toBeUndefined();
    // The printed configuration is what the receiver verifies with.
    const verify = createVerifier({ secrets: c.secret, scheme: best!.scheme, toleranceSeconds: 10 * TWO_DAYS });
    const { captures } = await readCaptures(dir);
    for (const captured of captures) expect(() => verify({ headers: captured.headers, body: captured.body })).not.toThrow();
  });

  it('says which key form matched when the receiver cannot use it yet', async () => {
    const { code, report } = await probe(dirs.get('/stripe-decoded-key')!, SECRET);
    expect(code).toBe(0);
    expect(report!.matches).toEqual([
      expect.objectContaining({ scheme: { kind: 'stripe-style', header: 'x-sig' }, keyForm: 'whsec-base64', usable: false, verified: 2 }),
    ]);
    const human = await runCli(['probe-signature', '--secret', SECRET, '--dir', dirs.get('/stripe-decoded-key')!], { cwd });
    expect(human.stdout).toContain('not configurable yet');
  });

  it('prints the configuration to use', async () => {
    const c = CASES.find((item) => item.name === 'hmac-sha256-hex-prefixed')!;
    const result = await runCli(['probe-signature', '--secret', c.secret, '--dir', dirs.get(`/${c.name}`)!], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('scheme: {"kind":"hmac","header":"x-hub-signature-256","algorithm":"sha256","encoding":"hex","prefix":"sha256="}');
    expect(result.stdout).toContain('signed timestamp: none');
    expect(result.stdout).toContain(`configure: CHECKOUT_WEBHOOK_SCHEME='{"kind":"hmac"`);
  });

  it('a wrong secret matches nothing: exit 1 with a clear message', async () => {
    for (const c of CASES) {
      const { code, report } = await probe(dirs.get(`/${c.name}`)!, 'whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==');
      expect(code, c.name).toBe(1);
      expect(report!.matches, c.name).toEqual([]);
    }
    const human = await runCli(['probe-signature', '--secret', 'wrong-secret-123', '--dir', dirs.get('/standard-webhooks')!], { cwd });
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/no configuration verifies every capture with this secret/);
  });

  it('mixed captures signed by different secrets are reported as partial, not as a match', async () => {
    const dir = join(cwd, 'mixed');
    await mkdir(dir);
    for (const name of ['standard-webhooks', 'hmac-sha512-base64']) {
      for (const file of await readdir(dirs.get(`/${name}`)!)) await copyFile(join(dirs.get(`/${name}`)!, file), join(dir, file));
    }
    const { code, report } = await probe(dir, SECRET);
    expect(code).toBe(1);
    expect(report!.partial.map((p) => [p.scheme.kind, p.verified, p.total])).toEqual(
      expect.arrayContaining([
        ['standard-webhooks', 2, 4],
        ['hmac', 2, 4],
      ]),
    );
  });

  it('usage errors exit 2: no --secret, no captures', async () => {
    expect((await runCli(['probe-signature', '--dir', captureDir], { cwd })).code).toBe(2);
    const empty = await tempDir();
    const none = await runCli(['probe-signature', '--secret', SECRET, '--dir', empty], { cwd });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no captures in .*: run `checkout-kit capture`/);
    const missing = await runCli(['probe-signature', '--secret', SECRET, '--dir', join(empty, 'nope')], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/No captures folder/);
  });
});
