/**
 * The package as a merchant receives it: `npm pack`, the tarball installed into a fresh folder with
 * `--omit=dev` and without the optional peers, then used the ways merchants use it: imported from
 * ESM, required from CommonJS, type-checked under `moduleResolution` node16 (.mts and .cts) and
 * bundler, and its CLI run. Then the optional peers are added and what needs them runs: the demo
 * (fastify) and a TypeScript fulfillment module (tsx).
 *
 * Every Node process is `process.execPath`, so CI runs this file on each Node line it has. Slow
 * (a build, two installs from the registry's cache): the timeouts are generous, and nothing waits
 * for a fixed time.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, open, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriver } from '../../src/store/sqlite/driver.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  exports: Record<string, unknown>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
/** `checkout-kit`, `checkout-kit/fastify`, … : every specifier the exports map answers. */
const SPECIFIERS = Object.keys(pkg.exports).map((subpath) => pkg.name + subpath.slice(1));
/**
 * What the build and `npm pack` read: the working tree's, copied, so the repository's own dist/ is
 * never touched; the build script (package.json's `build`) too, as `prepare` runs it before packing.
 */
const PACKED_FROM = ['package.json', 'tsconfig.json', 'README.md', 'LICENSE', 'src', 'templates', '.ci/build.mjs'];
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const ATTW = join(REPO, 'node_modules/@arethetypeswrong/cli/dist/index.js');

/** Whether the embedded store finds SQLite built into this Node (22.16+); before it, it needs better-sqlite3. */
function hasNodeSqlite(): boolean {
  try {
    loadDriver('node:sqlite');
    return true;
  } catch {
    return false;
  }
}

const MINUTE = 60_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `command` to its end in `cwd`; `stdoutFile`: its output goes there (a pipe may lose the end of a large one at exit). */
function run(command: string, args: string[], cwd: string, stdoutFile?: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', stdoutFile ?? 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `run`, which must exit 0: the failure shows its output. */
async function ok(command: string, args: string[], cwd: string): Promise<Run> {
  const result = await run(command, args, cwd);
  expect(result.code, `${command} ${args.join(' ')} in ${cwd}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return result;
}

const npmInstall = (args: string[], cwd: string) => ok('npm', ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', ...args], cwd);

/** Bytes of the consumer's node_modules, as `du -sb` counts them. */
async function installSize(consumer: string): Promise<number> {
  const { stdout } = await ok('du', ['-sb', 'node_modules'], consumer);
  return Number(stdout.split('\t')[0]);
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * One consumer source for every module kind: each entry imported as a namespace, and typed (an
 * entry whose declarations were not found would be `any`, and the expected error would not come).
 */
const consumerSource = SPECIFIERS.map(
  (specifier, i) => `import * as entry${i} from '${specifier}';
// @ts-expect-error: ${specifier} is typed: its exports are not all \`never\`
export const typed${i}: Record<string, never> = entry${i};
`,
).join('');

/** Type-check the consumers: node16 (.mts and .cts) and bundler (.ts); `skipLibCheck: false` also checks the declarations they read. */
async function typeCheck(consumer: string, skipLibCheck: boolean): Promise<void> {
  await writeFile(join(consumer, 'consumer.mts'), consumerSource);
  await writeFile(join(consumer, 'consumer.cts'), consumerSource);
  await writeFile(join(consumer, 'consumer.ts'), consumerSource);
  const options = { target: 'es2022', strict: true, noEmit: true, skipLibCheck, types: ['node'] };
  const configs = {
    'tsconfig.node16.json': { compilerOptions: { ...options, module: 'node16', moduleResolution: 'node16' }, files: ['consumer.mts', 'consumer.cts'] },
    'tsconfig.bundler.json': { compilerOptions: { ...options, module: 'preserve', moduleResolution: 'bundler' }, files: ['consumer.ts'] },
  };
  for (const [file, config] of Object.entries(configs)) {
    await writeFile(join(consumer, file), JSON.stringify(config, null, 2));
    await ok(process.execPath, [TSC, '-p', file], consumer);
  }
}

let root: string;
let tarball: string;
let consumer: string;
/** What `npm pack --json` says it packed. */
let packed: { filename: string; files: Array<{ path: string }> };
const sizes: Record<string, number> = {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ck-pack-'));
  const source = join(root, 'source');
  await mkdir(source);
  for (const entry of PACKED_FROM) await cp(join(REPO, entry), join(source, entry), { recursive: true });
  // The build's tools (tsc), from the repository's install.
  await symlink(await realpath(join(REPO, 'node_modules')), join(source, 'node_modules'), 'dir');
  // `prepare` builds dist/ (npm run build) before packing.
  const { stdout } = await ok('npm', ['pack', '--json', '--pack-destination', root], source);
  [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [typeof packed];
  tarball = join(root, packed.filename);

  consumer = join(root, 'consumer');
  await mkdir(consumer);
  await writeFile(join(consumer, 'package.json'), `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2)}\n`);
  await npmInstall([tarball], consumer);
  sizes['without the optional peers'] = await installSize(consumer);
}, 20 * MINUTE);

afterAll(async () => {
  const rows = Object.entries(sizes).map(([what, bytes]) => `  ${what}: ${mb(bytes)} (${bytes} bytes)`);
  if (rows.length > 0) console.log(`checkout-kit ${pkg.version} installed with --omit=dev, node_modules on Node ${process.version}:\n${rows.join('\n')}`);
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the packed package, installed without its optional peers', () => {
  it('ships dist/ without source maps, the templates, LICENSE, and every file the exports map names', () => {
    const files = new Set(packed.files.map((file) => file.path));
    expect([...files].filter((path) => path.endsWith('.map'))).toEqual([]);
    expect([...files].filter((path) => path.startsWith('src/'))).toEqual([]);
    expect(files.has('LICENSE')).toBe(true);
    expect(files.has('templates/fulfillment.ts')).toBe(true);
    const targets = JSON.stringify(pkg.exports).match(/\.\/dist\/[^"]+/g) ?? [];
    expect(targets.length).toBe(SPECIFIERS.length * 4);
    for (const target of targets) expect(files.has(target.slice(2)), target).toBe(true);
    // None of the optional peers came with it.
    for (const [name, meta] of Object.entries(pkg.peerDependenciesMeta)) {
      expect(meta.optional, name).toBe(true);
      expect(existsSync(join(consumer, 'node_modules', name)), name).toBe(false);
    }
  });

  it('every entry imports from ESM, and requires from CommonJS as the very same module', async () => {
    await writeFile(
      join(consumer, 'load.cjs'),
      `const specifiers = ${JSON.stringify(SPECIFIERS)};
(async () => {
  const loaded = {};
  for (const specifier of specifiers) {
    const required = require(specifier);
    const imported = await import(specifier);
    const names = Object.keys(imported);
    loaded[specifier] = { imported: names.length, required: Object.keys(required).length, same: names.every((name) => required[name] === imported[name]) };
  }
  console.log(JSON.stringify(loaded));
})();
`,
    );
    const { stdout, stderr } = await ok(process.execPath, ['load.cjs'], consumer);
    // No warning either (an experimental require() of ES modules would print one).
    expect(stderr).toBe('');
    const loaded = JSON.parse(stdout) as Record<string, { imported: number; required: number; same: boolean }>;
    expect(Object.keys(loaded)).toEqual(SPECIFIERS);
    for (const [specifier, { imported, required, same }] of Object.entries(loaded)) {
      expect(imported, specifier).toBeGreaterThan(0);
      expect(required, specifier).toBe(imported);
      expect(same, specifier).toBe(true);
    }
  });

  it(
    'a TypeScript consumer type-checks under node16 (.mts, .cts) and bundler',
    async () => {
      // skipLibCheck, as `tsc --init` sets it: checkout-kit/fastify's declarations name fastify's
      // types, and fastify is not installed. With the peers in place the declarations are checked too (below).
      await typeCheck(consumer, true);
    },
    5 * MINUTE,
  );

  it(
    "checkout-kit/web's declarations type-check in a Worker project: no Node types, skipLibCheck off",
    async () => {
      // The README's Worker, its store given by the caller; the DOM's Request and Response stand in for the runtime's.
      await writeFile(
        join(consumer, 'worker.ts'),
        `import { createWebHandler, createWebReceiver, type EventSink } from 'checkout-kit/web';
export default {
  async fetch(request: Request, env: { CHECKOUT_WEBHOOK_SECRET: string; store: EventSink }): Promise<Response> {
    return createWebHandler(createWebReceiver({ store: env.store, secrets: env.CHECKOUT_WEBHOOK_SECRET.split(/[ ,]+/) }))(request);
  },
};
`,
      );
      const compilerOptions = { target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, skipLibCheck: false, types: [] };
      await writeFile(
        join(consumer, 'tsconfig.worker.json'),
        JSON.stringify({ compilerOptions: { ...compilerOptions, module: 'preserve', moduleResolution: 'bundler' }, files: ['worker.ts'] }),
      );
      await ok(process.execPath, [TSC, '-p', 'tsconfig.worker.json'], consumer);
    },
    5 * MINUTE,
  );

  it(
    '@arethetypeswrong/cli finds no problem for node16 (from CJS and ESM) or bundler',
    async () => {
      // On the tarball `--pack` would make: the same npm pack, without building a second time.
      const report = join(root, 'attw.json');
      const file = await open(report, 'w');
      try {
        await run(process.execPath, [ATTW, tarball, '--format', 'json'], root, file.fd);
      } finally {
        await file.close();
      }
      const { problems, analysis } = JSON.parse(await readFile(report, 'utf8')) as {
        problems: Record<string, Array<{ kind: string; entrypoint?: string; resolutionKind?: string }>>;
        analysis: { entrypoints: Record<string, { resolutions: Record<string, unknown> }> };
      };
      expect(Object.keys(analysis.entrypoints)).toEqual(Object.keys(pkg.exports));
      for (const entrypoint of Object.values(analysis.entrypoints)) {
        expect(Object.keys(entrypoint.resolutions)).toEqual(expect.arrayContaining(['node16-cjs', 'node16-esm', 'bundler']));
      }
      // node10 (TypeScript's moduleResolution "node", which has no exports map) finds no subpath.
      expect(
        Object.values(problems)
          .flat()
          .filter((problem) => problem.resolutionKind !== 'node10'),
      ).toEqual([]);
    },
    5 * MINUTE,
  );

  it('the installed CLI: --version, init into an empty folder, and the demo and the sandbox say they need fastify', async () => {
    const bin = join(consumer, 'node_modules/.bin/checkout-kit');
    expect(existsSync(bin)).toBe(true);
    const version = await ok(process.execPath, [bin, '--version'], consumer);
    expect(version.stdout.trim()).toBe(pkg.version);

    const shop = join(root, 'shop');
    await ok(process.execPath, [bin, 'init', shop], consumer);
    for (const file of ['fulfillment.ts', 'src/server.ts', 'tsconfig.json', '.gitignore']) expect(existsSync(join(shop, file)), file).toBe(true);
    const manifest = JSON.parse(await readFile(join(shop, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies[pkg.name]).toBe(`^${pkg.version}`);

    const demo = await run(process.execPath, [bin, 'demo'], consumer);
    expect(demo.code).toBe(2);
    expect(demo.stderr).toBe(
      'checkout-kit: The demo needs fastify, an optional peer dependency of checkout-kit that is not installed: npm install fastify@5\n',
    );
    // The sandbox says so before it makes its folder: nothing is left behind.
    const sandbox = await run(process.execPath, [bin, 'sandbox', '--port', '0'], consumer);
    expect(sandbox.code).toBe(2);
    expect(sandbox.stderr).toBe(
      'checkout-kit: The sandbox needs fastify, an optional peer dependency of checkout-kit that is not installed: npm install fastify@5\n',
    );
    expect(existsSync(join(consumer, '.sandbox'))).toBe(false);
  });

  it('the build leaves each bin executable: a shop linked to a clone (npm install ../checkout-kit) still runs it after the clone builds again', async () => {
    // npm makes a bin executable when it installs the package, not when the clone's build writes it afresh.
    for (const bin of Object.values(pkg.bin)) {
      const { stdout } = await ok(join(root, 'source', bin), ['--version'], root);
      expect(stdout, bin).toBe(`${pkg.version}\n`);
    }
  });

  it('a .js fulfillment module written with export, in a "type": "commonjs" package, says how to load it', async () => {
    // Only the installed package shows it: a test runner's loader would compile the module whatever its package says.
    // What npm 11's `npm init -y` writes; without any "type", Node detects the module syntax and loads it.
    await mkdir(join(consumer, 'commonjs'), { recursive: true });
    await writeFile(join(consumer, 'commonjs/package.json'), JSON.stringify({ name: 'shop', type: 'commonjs' }));
    await writeFile(join(consumer, 'commonjs/fulfillment-esm.js'), 'export default { paid: async () => {} };\n');
    await writeFile(
      join(consumer, 'load-esm-handlers.mjs'),
      "import { loadHandlers } from 'checkout-kit';\nloadHandlers('commonjs/fulfillment-esm.js').then((h) => console.log(Object.keys(h).join(',')), (e) => console.log(e.message));\n",
    );
    const { stdout } = await ok(process.execPath, ['load-esm-handlers.mjs'], consumer);
    expect(stdout).toMatch(
      /^Could not load the fulfillment module .*fulfillment-esm\.js: Unexpected token 'export': the module is written with import \/ export but loaded as CommonJS .*npm pkg set type=module.*\.mjs.*module\.exports\.\n$/,
    );
    // An .mjs is an ES module whatever its package says: the same words there are a plain syntax error.
    await writeFile(join(consumer, 'commonjs/fulfillment-broken.mjs'), 'if (true) { export const paid = 1; }\nexport default {};\n');
    await writeFile(
      join(consumer, 'load-broken-handlers.mjs'),
      "import { loadHandlers } from 'checkout-kit';\nloadHandlers('commonjs/fulfillment-broken.mjs').then(() => console.log('loaded'), (e) => console.log(e.message));\n",
    );
    const broken = await ok(process.execPath, ['load-broken-handlers.mjs'], consumer);
    expect(broken.stdout).toMatch(/^Could not load the fulfillment module .*fulfillment-broken\.mjs: Unexpected token 'export'\n$/);
  });

  it('a TypeScript fulfillment module says it needs tsx', async () => {
    const handlers = join(consumer, 'fulfillment.ts');
    await writeFile(handlers, "export default { paid: async (resource: { id: string }) => console.log('paid', resource.id) };\n");
    await writeFile(
      join(consumer, 'load-handlers.mjs'),
      "import { loadHandlers } from 'checkout-kit';\nloadHandlers('fulfillment.ts').then((h) => console.log(Object.keys(h).join(',')), (e) => console.log(e.message));\n",
    );
    const { stdout } = await ok(process.execPath, ['load-handlers.mjs'], consumer);
    expect(stdout).toBe(
      `The TypeScript fulfillment module ${handlers} needs tsx, an optional peer dependency of checkout-kit that is not installed: npm install tsx@4\n`,
    );
  });
});

describe('with the optional peers fastify and tsx installed', () => {
  beforeAll(async () => {
    await npmInstall(
      ['fastify', 'tsx'].map((name) => `${name}@${pkg.peerDependencies[name]}`),
      consumer,
    );
    sizes['with fastify and tsx'] = await installSize(consumer);
  }, 20 * MINUTE);

  it('the TypeScript fulfillment module loads', async () => {
    const { stdout } = await ok(process.execPath, ['load-handlers.mjs'], consumer);
    expect(stdout).toBe('paid\n');
  });

  it(
    'the declarations themselves type-check under node16 and bundler (skipLibCheck off)',
    async () => {
      await typeCheck(consumer, false);
    },
    5 * MINUTE,
  );

  it(
    'checkout-kit demo runs: every order reaches its outcome with one handler call',
    async () => {
      if (!hasNodeSqlite()) {
        // The embedded store needs better-sqlite3 on this Node: the repository's built copy stands in
        // for an install (the registry's package downloads or compiles its addon on install).
        await symlink(await realpath(join(REPO, 'node_modules/better-sqlite3')), join(consumer, 'node_modules/better-sqlite3'), 'dir');
      }
      const demo = await ok(process.execPath, [join(consumer, 'node_modules/.bin/checkout-kit'), 'demo', '--orders', '6'], consumer);
      expect(demo.stdout).toMatch(/^all 6 orders reached their outcome with exactly one handler call per outcome/m);
    },
    5 * MINUTE,
  );
});
