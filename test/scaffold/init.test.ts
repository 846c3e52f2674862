import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { SandboxCredentials } from '../../src/sandbox/index.js';
import { FRAMEWORKS, TEMPLATE_FILES, templateFiles, type ScaffoldReport } from '../../src/scaffold/index.js';
import { nextSteps } from '../../src/scaffold/next-steps.js';
import { nodeHasSqlite } from '../../src/store/sqlite/driver.js';
import { loadDriver } from '../../src/store/sqlite/driver.js';
import { newWebhookSecret } from '../../src/webhooks/index.js';
import { runCli } from '../support/cli.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const TEMPLATES = join(REPO, 'templates');
const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string };

const temps: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ck-init-'));
  temps.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function init(dir: string, ...flags: string[]): Promise<ScaffoldReport> {
  const result = await runCli(['init', dir, '--json', ...flags], { cwd: tmpdir() });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ScaffoldReport;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** A sandbox's credentials.json in `dir/.sandbox`, as a sandbox at `baseUrl` writes it (keys of `like`, else new ones). */
async function fakeSandbox(dir: string, baseUrl: string, like?: SandboxCredentials): Promise<SandboxCredentials> {
  const account = (environment: 'test' | 'live') => ({
    partner: { apiKey: `svc_pk_${environment}_${randomUUID()}`, signingSecret: `svc_ps_${randomUUID()}` },
    merchant: {
      merchantId: randomUUID(),
      apiKey: `svc_mk_${environment}_${randomUUID()}`,
      signingSecret: `svc_ms_${randomUUID()}`,
      invoiceKey: `${environment}_${randomUUID()}`,
    },
  });
  const credentials: SandboxCredentials = { ...(like ?? { webhookSecret: newWebhookSecret(), test: account('test'), live: account('live') }), baseUrl };
  await mkdir(join(dir, '.sandbox'), { recursive: true });
  await writeFile(join(dir, '.sandbox', 'credentials.json'), JSON.stringify(credentials));
  return credentials;
}

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, string>>;

describe('the template maps', () => {
  it('ship every file of templates/ in some framework, each destination once per map, dotfiles stored under _names', async () => {
    const maps = FRAMEWORKS.map((framework) => templateFiles(framework));
    const sources = new Set(maps.flatMap((map) => map.map(([source]) => source)));
    expect([...sources].sort()).toEqual((await filesUnder(TEMPLATES)).sort());
    for (const map of maps) expect(new Set(map.map(([, destination]) => destination)).size).toBe(map.length);
    expect([...sources].filter((source) => source.split('/').some((part) => part.startsWith('.')))).toEqual([]);
    expect(TEMPLATE_FILES).toEqual(templateFiles('fastify'));
  });
});

describe('checkout-kit init', () => {
  it('(a) writes every file of the map into an empty folder, dotfiles renamed, and a package.json', async () => {
    const dir = join(await tempDir(), 'shop');
    const report = await init(dir);

    expect(report.createdDir).toBe(true);
    expect(report.files).toEqual({ written: TEMPLATE_FILES.map(([, destination]) => destination), overwritten: [], skipped: [], withheld: [] });
    for (const [source, destination] of TEMPLATE_FILES) {
      expect(await readFile(join(dir, destination)), destination).toEqual(await readFile(join(TEMPLATES, source)));
    }
    expect(existsSync(join(dir, '.gitignore')) && existsSync(join(dir, '.env.example'))).toBe(true);
    expect((await filesUnder(dir)).filter((file) => file.includes('_gitignore') || file.includes('_env'))).toEqual([]);

    const manifest = await readJson(join(dir, 'package.json'));
    expect(manifest).toMatchObject({ name: 'shop', private: true, type: 'module' });
    expect(manifest.scripts).toEqual({
      'checkout:serve': 'checkout-kit serve',
      'checkout:reconcile': 'checkout-kit reconcile',
      'checkout:sandbox': 'checkout-kit sandbox',
      dev: 'tsx watch src/server.ts',
      test: 'vitest run',
    });
    // tsx loads fulfillment.ts for serve and reconcile in production too: a dependency.
    expect(manifest.dependencies).toMatchObject({ 'checkout-kit': `^${version}`, fastify: expect.any(String), tsx: expect.any(String) });
    expect(Object.keys(manifest.devDependencies ?? {}).sort()).toEqual(['@types/node', 'typescript', 'vitest']);
    expect(report.packageJson.action).toBe('created');
    // No value to copy by hand: the sandbox writes them into .env.
    expect(report.nextSteps.join('\n')).toMatch(/checkout:sandbox -- --webhook-url \S+ --write-env[\s\S]*npm run dev/);
    expect(report.nextSteps.join('\n')).not.toMatch(/cp \.env|credentials\.json|fill /);
    expect(report.env).toBeUndefined();
    expect(existsSync(join(dir, '.env'))).toBe(false);
  });

  it('(b) never overwrites an existing file without --force, and only adds to package.json', async () => {
    const dir = await tempDir();
    const mine = '// my own handlers\nexport default {};\n';
    await writeFile(join(dir, 'fulfillment.ts'), mine);
    // Four-space indent, no final newline, an existing dev script and dependencies at our versions or not.
    const original = {
      name: 'my-shop',
      version: '3.1.4',
      type: 'module',
      scripts: { dev: 'node watch.js', lint: 'eslint .' },
      dependencies: { fastify: '5.0.0', ms: '^2.1.3' },
      devDependencies: { vitest: '~4.0.0' },
      prettier: { semi: false },
    };
    const originalText = JSON.stringify(original, null, 4);
    await writeFile(join(dir, 'package.json'), originalText);

    const report = await init(dir);
    expect(await readFile(join(dir, 'fulfillment.ts'), 'utf8')).toBe(mine);
    expect(report.files.skipped).toEqual(['fulfillment.ts']);
    // The scaffold's tests of the scaffold's handlers would fail on the project's own: not written.
    const withheld = ['test/webhook.test.ts', 'test/fulfillment.test.ts'];
    expect(report.files.withheld).toEqual(withheld.map((file) => ({ file, kept: ['fulfillment.ts'] })));
    for (const file of withheld) expect(existsSync(join(dir, file)), file).toBe(false);
    expect(report.files.written).toEqual(
      TEMPLATE_FILES.map(([, destination]) => destination).filter((file) => file !== 'fulfillment.ts' && !withheld.includes(file)),
    );

    const text = await readFile(join(dir, 'package.json'), 'utf8');
    const manifest = JSON.parse(text) as typeof original & Record<string, Record<string, string>>;
    expect(text.startsWith('{\n    "name": "my-shop",\n    "version": "3.1.4",')).toBe(true);
    expect(text.endsWith('}')).toBe(true);
    expect(Object.keys(manifest)).toEqual(Object.keys(original));
    expect(manifest.prettier).toEqual({ semi: false });
    expect(manifest.scripts).toEqual({
      dev: 'node watch.js',
      lint: 'eslint .',
      'checkout:serve': 'checkout-kit serve',
      'checkout:reconcile': 'checkout-kit reconcile',
      'checkout:sandbox': 'checkout-kit sandbox',
      test: 'vitest run',
    });
    expect(manifest.dependencies).toEqual({ fastify: '5.0.0', ms: '^2.1.3', 'checkout-kit': `^${version}`, tsx: expect.any(String) });
    expect(Object.keys(manifest.devDependencies)).toEqual(['vitest', 'typescript', '@types/node']);
    expect(manifest.devDependencies.vitest).toBe('~4.0.0');
    expect(report.packageJson).toMatchObject({ action: 'updated', kept: { scripts: ['dev'], dependencies: ['fastify', 'vitest'] } });
    expect(report.nextSteps.join('\n')).toContain('npx tsx watch src/server.ts');
    // check starts the scaffold's server, not the project's own dev script (node watch.js).
    expect(report.nextSteps.at(-1)).toContain('--start "npx tsx src/server.ts"');

    // Again: nothing to add, so package.json is not rewritten; --force replaces the handlers.
    const again = await init(dir, '--force');
    expect(again.files.overwritten).toEqual(TEMPLATE_FILES.map(([, destination]) => destination).filter((file) => !withheld.includes(file)));
    expect(again.files.written).toEqual(withheld);
    expect(again.packageJson.action).toBe('unchanged');
    expect(await readFile(join(dir, 'package.json'), 'utf8')).toBe(text);
    expect(await readFile(join(dir, 'fulfillment.ts'))).toEqual(await readFile(join(TEMPLATES, 'fulfillment.ts')));
  });

  it('run again on its own scaffold, still tells to `npm run dev` and `npm run test`, and reports no script of the project kept', async () => {
    const dir = join(await tempDir(), 'shop');
    const first = await init(dir);
    expect(first.nextSteps.join('\n')).toContain('npm run dev');
    const again = await init(dir);
    // Its own scripts and packages, added by the first run, are not the project's own versions kept.
    expect(again.packageJson).toMatchObject({ action: 'unchanged', kept: { scripts: [], dependencies: [] } });
    expect(again.files.withheld).toEqual([]);
    const steps = again.nextSteps.join('\n');
    expect(steps).toContain('npm run dev');
    expect(steps).toContain('npm run test');
    expect(steps).not.toContain('script was kept');
    expect(steps).toContain('--start "npm run dev"');
  });

  it("beside a sandbox (the target's .sandbox, else the working folder's) writes .env from its credentials; keeps differing values without --force", async () => {
    const cwd = await tempDir();
    const credentials = await fakeSandbox(cwd, 'http://127.0.0.1:4010');
    const dir = join(cwd, 'shop');
    const result = await runCli(['init', 'shop'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^ +wrote +\.env \(CHECKOUT_WEBHOOK_SECRET, CHECKOUT_API_KEY, CHECKOUT_SIGNING_SECRET, CHECKOUT_INVOICE_KEY from \.sandbox\/credentials\.json\)$/m,
    );
    // (CHECKOUT_BASE_URL: .env.example's default is already the sandbox's.)
    const text = await readFile(join(dir, '.env'), 'utf8');
    // .env.example with the five values set: its explanations and defaults stay.
    expect(
      text.split('\n').filter((line) => !line.startsWith('CHECKOUT_') || line.startsWith('CHECKOUT_PARTNER') || line.startsWith('CHECKOUT_STORE')),
    ).toEqual(
      (await readFile(join(TEMPLATES, '_env.example'), 'utf8'))
        .split('\n')
        .filter((line) => !line.startsWith('CHECKOUT_') || line.startsWith('CHECKOUT_PARTNER') || line.startsWith('CHECKOUT_STORE')),
    );
    expect((await stat(join(dir, '.env'))).mode & 0o777).toBe(0o600);
    const config = loadConfig({ env: {}, cwd: dir });
    const { merchant } = credentials.test;
    expect([config.baseUrl, config.webhookSecrets, config.apiKey, config.signingSecret, config.invoiceKey]).toEqual([
      'http://127.0.0.1:4010',
      [credentials.webhookSecret],
      merchant.apiKey,
      merchant.signingSecret,
      merchant.invoiceKey,
    ]);

    // A sandbox of the shop's own, started again on another port: the target's .sandbox wins over the cwd's.
    await fakeSandbox(dir, 'http://127.0.0.1:4011', credentials);
    await writeFile(join(dir, '.env'), text.replace(/^CHECKOUT_API_KEY=.*$/m, 'CHECKOUT_API_KEY=svc_mk_test_mine'));
    const kept = JSON.parse((await runCli(['init', 'shop', '--json'], { cwd })).stdout) as ScaffoldReport;
    expect(kept.env).toMatchObject({ credentials: 'shop/.sandbox/credentials.json', created: false, set: [], kept: ['CHECKOUT_BASE_URL', 'CHECKOUT_API_KEY'] });
    expect(loadConfig({ env: {}, cwd: dir })).toMatchObject({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'svc_mk_test_mine' });
    const human = await runCli(['init', dir], { cwd });
    expect(human.stdout).toContain(
      "kept        .env's CHECKOUT_BASE_URL, CHECKOUT_API_KEY: they differ from shop/.sandbox/credentials.json; `checkout-kit sandbox --write-env` (or init --force) sets the sandbox's",
    );
    const forced = JSON.parse((await runCli(['init', 'shop', '--json', '--force'], { cwd })).stdout) as ScaffoldReport;
    expect(forced.env).toMatchObject({ set: ['CHECKOUT_BASE_URL', 'CHECKOUT_API_KEY'], kept: [] });
    expect(loadConfig({ env: {}, cwd: dir })).toMatchObject({ baseUrl: 'http://127.0.0.1:4011', apiKey: merchant.apiKey });
  });

  it('refuses a sandbox credentials file it cannot read before writing anything, with one line', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, '.sandbox'));
    await writeFile(join(dir, '.sandbox', 'credentials.json'), '{"baseUrl":');
    const result = await runCli(['init', dir], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`checkout-kit: ${join(dir, '.sandbox', 'credentials.json')} is not JSON: restart the sandbox to rewrite it.\n`);
    expect(await readdir(dir)).toEqual(['.sandbox']);
  });

  it('on a Node without SQLite built in, the next steps install better-sqlite3 right after npm install, before npm run dev needs the store', async () => {
    const builtIn = (() => {
      try {
        loadDriver('node:sqlite');
        return true;
      } catch {
        return false;
      }
    })();
    // The version rule agrees with the store's driver on this Node.
    expect(nodeHasSqlite()).toBe(builtIn);
    const step = /^npm install better-sqlite3@12 .*npm install-scripts approve better-sqlite3/;
    for (const [version, needed] of [
      ['20.19.0', true],
      ['22.15.1', true],
      ['22.16.0', false],
      ['23.7.0', true],
      ['23.8.0', false],
      ['24.0.0', false],
      ['26.12.1', false],
    ] as const) {
      const steps = nextSteps('/shop', '/shop', [], 'fastify', version);
      expect(steps[0]).toBe('npm install');
      expect(step.test(steps[1] ?? ''), version).toBe(needed);
      expect(
        steps.filter((line) => step.test(line)),
        version,
      ).toHaveLength(needed ? 1 : 0);
    }

    const report = await init(join(await tempDir(), 'shop'));
    expect(report.nextSteps.some((line) => step.test(line))).toBe(!builtIn);
  });

  it('says what it skipped in human output', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tsconfig.json'), '{}\n');
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'src/server.ts'), 'export {};\n');
    const result = await runCli(['init', dir], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/skipped +tsconfig\.json \(exists; --force overwrites\)/);
    expect(result.stdout).toMatch(
      /not written test\/webhook\.test\.ts \(it tests the scaffold's src\/server\.ts, and yours were kept; --force writes them all\)/,
    );
    expect(result.stdout).toMatch(/wrote +\.gitignore/);
    expect(result.stdout).not.toMatch(/^ +1\. cd /m);
    expect(await readFile(join(dir, 'tsconfig.json'), 'utf8')).toBe('{}\n');
  });

  it('refuses a broken package.json with exit 2, before writing anything', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'package.json'), '{ "name": "x", }');
    const result = await runCli(['init', dir], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/package\.json is not valid JSON/);
    expect(await readdir(dir)).toEqual(['package.json']);
  });

  it('refuses a target that is a file, with exit 2', async () => {
    const file = join(await tempDir(), 'not-a-folder');
    await writeFile(file, 'x');
    const result = await runCli(['init', file], { cwd: tmpdir() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/is not a folder/);
  });
});

interface Ran {
  code: number | null;
  output: string;
  seconds: number;
}

/** Run a command to completion; output interleaved, for the assertion message. */
function exec(command: string, args: string[], cwd: string): Promise<Ran> {
  const started = Date.now();
  // A clean environment: no vitest worker variables leaking into the scaffold's own vitest.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VITEST|CHECKOUT_|NODE_ENV$|TEST$)/.test(name)));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output, seconds: (Date.now() - started) / 1000 }));
  });
}

describe('end to end', () => {
  it('(c) scaffolds an empty folder and one with existing files, installs the local package, type-checks and runs the sample test green', async () => {
    const timings: Record<string, number> = {};
    // The package's exports point at dist/: build it (emitted even if files others are editing have type errors).
    const build = await exec(join(REPO, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], REPO);
    timings.build = build.seconds;
    expect(existsSync(join(REPO, 'dist/index.js')) && existsSync(join(REPO, 'dist/testing/index.d.ts')), build.output).toBe(true);
    if (build.code !== 0) console.warn(`tsc reported errors while building dist/ (continuing):\n${build.output.slice(0, 2000)}`);

    const empty = join(await tempDir(), 'fresh-shop');
    await init(empty);
    const existing = join(await tempDir(), 'old-shop');
    await mkdir(existing);
    await writeFile(join(existing, 'README.md'), '# Our shop\n');
    await writeFile(join(existing, '.gitignore'), 'node_modules/\n');
    await writeFile(
      join(existing, 'package.json'),
      `${JSON.stringify({ name: 'old-shop', private: true, type: 'module', scripts: { start: 'node index.js' } }, null, 2)}\n`,
    );
    const report = await init(existing);
    expect(report.files.skipped).toEqual(['README.md', '.gitignore']);
    expect(await readFile(join(existing, 'README.md'), 'utf8')).toBe('# Our shop\n');

    // One install, from the repository itself; the empty-folder scaffold shares its node_modules.
    const manifest = await readJson(join(existing, 'package.json'));
    expect(manifest.dependencies?.['checkout-kit']).toBe(`^${version}`);
    manifest.dependencies = { ...manifest.dependencies, 'checkout-kit': `file:${REPO}` };
    await writeFile(join(existing, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const install = await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], existing);
    timings.install = install.seconds;
    expect(install.code, install.output).toBe(0);
    await symlink(join(existing, 'node_modules'), join(empty, 'node_modules'), 'dir');

    for (const dir of [existing, empty]) {
      const name = dir === existing ? 'existing' : 'empty';
      const tsc = await exec('npx', ['tsc', '--noEmit', '-p', '.'], dir);
      timings[`tsc ${name}`] = tsc.seconds;
      expect(tsc.code, tsc.output).toBe(0);

      const vitest = await exec('npx', ['vitest', 'run', '--reporter=json', '--outputFile=vitest-report.json'], dir);
      timings[`vitest ${name}`] = vitest.seconds;
      expect(vitest.code, vitest.output).toBe(0);
      const results = JSON.parse(await readFile(join(dir, 'vitest-report.json'), 'utf8')) as {
        success: boolean;
        numPassedTests: number;
        numFailedTests: number;
        numTotalTests: number;
      };
      expect(results).toMatchObject({ success: true, numFailedTests: 0 });
      expect(results.numPassedTests).toBeGreaterThanOrEqual(5);
      expect(results.numPassedTests).toBe(results.numTotalTests);
    }
    console.info(`init end to end, seconds: ${JSON.stringify(timings)}`);
  }, 600_000);
});
