import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/webhooks/index.js';
import { runCli } from '../support/cli.js';
import { freePort, holdPort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

afterEach(removeTempDirs);

async function check(args: string[], env: Record<string, string> = {}) {
  const cwd = await tempDir('ck-check-usage-');
  return runCli(['check', ...args], { cwd, env: { CHECKOUT_STORE: `file:${join(cwd, 'store')}`, ...env } });
}

const oneLine = (text: string) => text.trim().split('\n').length === 1;

describe('checkout-kit check: bad input is one clear line and exit 2', () => {
  it('--against is required and must be an http(s) URL', async () => {
    expect((await check([])).code).toBe(2);
    const bad = await check(['--against', 'localhost:3000']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^checkout-kit: --against takes an http\(s\) URL/);
    expect(oneLine(bad.stderr)).toBe(true);
  });

  it('--only names scenarios it knows, --timeout a duration', async () => {
    const only = await check(['--against', 'http://127.0.0.1:9/webhooks/checkout', '--only', 'paid,refund']);
    expect([only.code, oneLine(only.stderr)]).toEqual([2, true]);
    expect(only.stderr).toMatch(/--only takes scenarios from paid, partial-then-paid, .*; unknown: refund/);
    const timeout = await check(['--against', 'http://127.0.0.1:9/webhooks/checkout', '--timeout', 'soon']);
    expect(timeout.stderr).toMatch(/--timeout takes a duration/);
    expect(timeout.code).toBe(2);
  });

  it('refuses live keys and a base URL that is not a local sandbox, before starting anything', async () => {
    const live = await check(['--against', 'http://127.0.0.1:9/webhooks/checkout'], {
      CHECKOUT_API_KEY: 'svc_mk_live_abcdefgh',
      CHECKOUT_SIGNING_SECRET: 'svc_ms_abcdefgh',
    });
    expect([live.code, oneLine(live.stderr)]).toEqual([2, true]);
    expect(live.stderr).toMatch(/live keys/);
    const remote = await check(['--against', 'http://127.0.0.1:9/webhooks/checkout'], { CHECKOUT_BASE_URL: 'https://api.example.com' });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/CHECKOUT_BASE_URL is https:\/\/api\.example\.com, not a local sandbox/);
  });

  it("a webhook secret that is not the sandbox's, and a backend that does not answer, are configuration errors", async () => {
    const data = await tempDir('ck-check-data-');
    const secret = await check(['--against', 'http://127.0.0.1:9/webhooks/checkout', '--data', data, '--sandbox-port', '0'], {
      CHECKOUT_WEBHOOK_SECRET: newWebhookSecret(),
    });
    expect([secret.code, oneLine(secret.stderr)]).toEqual([2, true]);
    expect(secret.stderr).toMatch(/CHECKOUT_WEBHOOK_SECRET is not this sandbox's webhookSecret/);
    expect(secret.stderr).not.toMatch(/whsec_/);

    const port = await freePort();
    const absent = await check(['--against', `http://127.0.0.1:${port}/webhooks/checkout`, '--data', data, '--sandbox-port', '0']);
    expect([absent.code, oneLine(absent.stderr)]).toEqual([2, true]);
    expect(absent.stderr).toMatch(new RegExp(`Cannot reach the backend at http://127\\.0\\.0\\.1:${port}/webhooks/checkout: nothing answers .*ECONNREFUSED`));
  });

  it('--start where another server already answers is refused before anything starts: check would prove that server, not the one it starts', async () => {
    const other = Fastify();
    other.all('/*', async (_request, reply) => reply.code(503).send({ error: { code: 'service_unreachable', message: 'an old backend' } }));
    const origin = await other.listen({ host: '127.0.0.1', port: 0 });
    try {
      const cwd = await tempDir('ck-check-usage-');
      const result = await runCli(['check', '--against', `${origin}/webhooks/checkout`, '--start', 'touch started'], {
        cwd,
        env: { CHECKOUT_STORE: `file:${join(cwd, 'store')}` },
      });
      expect([result.code, oneLine(result.stderr)]).toEqual([2, true]);
      expect(result.stderr).toBe(
        `checkout-kit: Something already answers at ${origin} (another backend, or an earlier one still running): check --start starts yours there. Stop it, or give --against a free port.\n`,
      );
      expect(existsSync(join(cwd, 'started'))).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('a taken --sandbox-port is said as check says it, naming its own flag', async () => {
    const taken = await holdPort();
    const { port } = taken;
    try {
      const busy = await check([
        '--against',
        'http://127.0.0.1:9/webhooks/checkout',
        '--data',
        await tempDir('ck-check-data-'),
        '--sandbox-port',
        String(port),
      ]);
      expect([busy.code, oneLine(busy.stderr)]).toEqual([2, true]);
      expect(busy.stderr).toMatch(new RegExp(`^checkout-kit: Port ${port} is taken: stop \`checkout-kit sandbox\` there .*or give --sandbox-port\\.$`, 'm'));
    } finally {
      await taken.release();
    }
  });
});
