import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAMEWORK_SCAFFOLDS, FRAMEWORKS, templateFiles, type Framework, type ScaffoldReport } from '../../src/scaffold/index.js';
import { runCli, TSX_LOADER } from '../support/cli.js';
import { linkKit, REPO } from '../support/scaffold.js';

const TEMPLATES = join(REPO, 'templates');
const DRIVER = fileURLToPath(new URL('./fixtures/drive-scaffold.ts', import.meta.url));
const CHECKOUT_DRIVER = fileURLToPath(new URL('./fixtures/drive-checkout-body.ts', import.meta.url));
const kit = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

let root: string;
const scaffolds = {} as Record<Framework, { dir: string; report: ScaffoldReport }>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ck-frameworks-'));
  for (const framework of FRAMEWORKS) {
    const dir = join(root, `shop-${framework}`);
    // The partner platform is chosen with --partner, not --framework.
    const choice = framework === 'partner' ? ['--partner'] : ['--framework', framework];
    const result = await runCli(['init', dir, ...choice, '--json'], { cwd: root });
    expect(result.code, result.stderr).toBe(0);
    scaffolds[framework] = { dir, report: JSON.parse(result.stdout) as ScaffoldReport };
    // The framework packages as checkout-kit's own tests use them (its devDependencies).
    await linkKit(dir);
  }
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('checkout-kit init --framework', () => {
  it.each(FRAMEWORKS)(
    '%s: writes its server files and the common ones byte for byte, and its packages at the ranges checkout-kit is tested with',
    async (framework) => {
      const { dir, report } = scaffolds[framework];
      expect(report.framework).toBe(framework);
      const map = templateFiles(framework);
      expect(report.files).toEqual({ written: map.map(([, destination]) => destination), overwritten: [], skipped: [], withheld: [] });
      for (const [source, destination] of map) expect(await readFile(join(dir, destination)), destination).toEqual(await readFile(join(TEMPLATES, source)));

      const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
      const { dependencies, devDependencies, scripts } = FRAMEWORK_SCAFFOLDS[framework];
      for (const name of dependencies) expect(manifest.dependencies?.[name], name).toBe(kit.dependencies[name] ?? kit.devDependencies[name]);
      for (const name of devDependencies) expect(manifest.devDependencies?.[name], name).toBe(kit.devDependencies[name]);
      // Only the chosen framework's packages.
      const others = FRAMEWORKS.filter((other) => other !== framework).flatMap((other) => FRAMEWORK_SCAFFOLDS[other].dependencies);
      expect(
        Object.keys(manifest.dependencies ?? {}).filter((name) => others.includes(name as never) && !(dependencies as readonly string[]).includes(name)),
      ).toEqual([]);
      expect(manifest.scripts?.dev).toBe((scripts as Record<string, string>).dev ?? 'tsx watch src/server.ts');
      // Its `checkout:sandbox` script and `checkout-kit check` run on fastify, whatever the shop's framework.
      expect(manifest.scripts?.['checkout:sandbox']).toBe('checkout-kit sandbox');
      expect(manifest.dependencies?.fastify ?? manifest.devDependencies?.fastify).toBe(kit.devDependencies.fastify ?? kit.dependencies.fastify);
      expect(Object.keys(manifest.dependencies ?? {}).filter((name) => name in (manifest.devDependencies ?? {}))).toEqual([]);
    },
  );

  it('puts the webhook route where its framework needs it', async () => {
    const read = (framework: Framework, file: string) => readFile(join(scaffolds[framework].dir, file), 'utf8');
    const express = await read('express', 'src/server.ts');
    expect(express.indexOf("app.post('/webhooks/checkout', createNodeHandler")).toBeGreaterThan(0);
    expect(express.indexOf("app.post('/webhooks/checkout', createNodeHandler")).toBeLessThan(express.indexOf('app.use(express.json()'));
    expect(await read('hono', 'src/server.ts')).toContain('webhook(c.req.raw)');
    expect(await read('nest', 'src/server.ts')).toContain('{ rawBody: true');
    expect(await read('nest', 'src/server.ts')).toContain('@Inject(SHOP)');
    expect(JSON.parse(await read('nest', 'tsconfig.json')).compilerOptions.experimentalDecorators).toBe(true);
    expect(await read('next', 'app/webhooks/checkout/route.ts')).toMatch(/export async function POST\(request: Request\)/);
    expect(await read('fastify', 'src/server.ts')).toContain('checkoutWebhooks');
    expect(scaffolds.next.report.nextSteps.join('\n')).toContain('in your Next.js app');
    // next build bundles route handlers: checkout-kit must stay external, or its optional peers fail the build.
    expect(scaffolds.next.report.nextSteps.join('\n')).toContain("in next.config, set serverExternalPackages: ['checkout-kit']");
    expect(scaffolds.express.report.nextSteps.join('\n')).not.toContain('serverExternalPackages');
    // Next.js's bundler, under create-next-app's tsconfig (moduleResolution bundler), maps no relative .js import to its .ts.
    for (const route of templateFiles('next').filter(([, to]) => to.startsWith('app/'))) {
      expect(await read('next', route[1]), route[1]).not.toMatch(/from '\.{1,2}\/[^']*\.js'/);
    }
  });

  it('defaults to fastify, and refuses an unknown framework with exit 2 before writing anything', async () => {
    const dir = join(root, 'default');
    const result = await runCli(['init', dir, '--json'], { cwd: root });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as ScaffoldReport).framework).toBe('fastify');

    const refused = join(root, 'refused');
    const unknown = await runCli(['init', refused, '--framework', 'rails'], { cwd: root });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown framework "rails": choose one of fastify, express, hono, next, nest.');
    await expect(readFile(join(refused, 'package.json'))).rejects.toThrow(/ENOENT/);
    for (const args of [
      ['--framework', 'partner'],
      ['--partner', '--framework', 'express'],
    ]) {
      const wrong = await runCli(['init', refused, ...args], { cwd: root });
      expect(wrong.code, args.join(' ')).toBe(2);
    }
    await expect(readFile(join(refused, 'package.json'))).rejects.toThrow(/ENOENT/);
  });

  it('--partner: the platform server has the onboarding route and a checkout per tenant, its next steps connect as the partner, and it leaves out the merchant check workflow', async () => {
    const { dir, report } = scaffolds.partner;
    const server = await readFile(join(dir, 'src/server.ts'), 'utf8');
    expect(server).toContain('await app.register(onboardingRoutes, { store, partner, logger });');
    expect(server).toContain('creator: { partner }');
    expect(await readFile(join(dir, 'fulfillment.ts'), 'utf8')).toContain('`${ctx.tenantId}/${orderId}`');
    expect(report.nextSteps.join('\n')).toContain('--write-env --partner');
    expect(report.files.written).not.toContain('.github/workflows/checkout-check.yml');
  });

  // One program per resolution over the scaffolds: a minute or more of CPU on a busy machine.
  it('every scaffold type-checks against checkout-kit', () => {
    const configs = Object.fromEntries(
      FRAMEWORKS.map((framework) => {
        const parsed = ts.getParsedCommandLineOfConfigFile(
          join(scaffolds[framework].dir, 'tsconfig.paths.json'),
          {},
          { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
        );
        expect(parsed?.errors, framework).toEqual([]);
        return [framework, parsed!];
      }),
    ) as Record<Framework, ts.ParsedCommandLine>;
    // Next.js's scaffold resolves as create-next-app's tsconfig does (bundler), the others as Node
    // does: one program for each (one checker, checkout-kit's sources read once per program). Within
    // one, the options are the same but for nest's experimentalDecorators, which changes nothing elsewhere.
    const groups: Framework[][] = [FRAMEWORKS.filter((framework) => framework !== 'next'), ['next']];
    expect(configs.next.options.moduleResolution).toBe(ts.ModuleResolutionKind.Bundler);
    const comparable = ({ configFilePath, pathsBasePath, ...rest }: ts.CompilerOptions) => ({ ...rest, experimentalDecorators: true });
    const diagnostics: ts.Diagnostic[] = [];
    for (const group of groups) {
      const options = configs[group.includes('nest') ? 'nest' : group[0]!].options;
      for (const framework of group) expect(comparable(configs[framework].options), framework).toEqual(comparable(options));
      const program = ts.createProgram(
        group.flatMap((framework) => configs[framework].fileNames),
        options,
      );
      // The scaffolds' own files: checkout-kit's sources are type-checked by its own build.
      const own = program.getSourceFiles().filter((file) => file.fileName.startsWith(root) && !file.fileName.includes('/node_modules/'));
      for (const framework of group) {
        const files = own
          .filter((file) => file.fileName.startsWith(`${scaffolds[framework].dir}/`))
          .map((file) => file.fileName.slice(scaffolds[framework].dir.length + 1));
        expect(files, framework).toEqual(
          expect.arrayContaining([
            'fulfillment.ts',
            'test/webhook.test.ts',
            ...templateFiles(framework)
              .map(([, to]) => to)
              .filter((to) => to.endsWith('.ts')),
          ]),
        );
      }
      diagnostics.push(
        ...program.getOptionsDiagnostics(),
        ...own.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
      );
    }
    expect(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => '\n' })).toBe('');
  }, 300_000);

  it('every scaffold’s server (or Next.js route) accepts a signed delivery, fulfils the order once, and refuses a tampered copy', async () => {
    const runs = await Promise.all(
      FRAMEWORKS.map(async (framework) => {
        const { dir } = scaffolds[framework];
        const output = await run(process.execPath, ['--import', TSX_LOADER, DRIVER, framework], dir, { TSX_TSCONFIG_PATH: join(dir, 'tsconfig.paths.json') });
        const line = output.stdout.trim().split('\n').pop() ?? '';
        return { framework, output, result: line.startsWith('{') ? (JSON.parse(line) as unknown) : undefined };
      }),
    );
    for (const { framework, output, result } of runs) {
      expect(result, `${framework}: ${output.stderr}`).toEqual({ accepted: 200, tampered: 401, state: 'paid', shipments: 1 });
    }
  });

  it('every scaffold’s POST /checkout answers a body that does not parse with 400 and the spec’s error object', async () => {
    const runs = await Promise.all(
      FRAMEWORKS.map(async (framework) => {
        const { dir } = scaffolds[framework];
        const output = await run(process.execPath, ['--import', TSX_LOADER, CHECKOUT_DRIVER, framework], dir, {
          TSX_TSCONFIG_PATH: join(dir, 'tsconfig.paths.json'),
        });
        const line = output.stdout.trim().split('\n').pop() ?? '';
        return { framework, output, result: line.startsWith('{') ? (JSON.parse(line) as unknown) : undefined };
      }),
    );
    const refused = { status: 400, code: 'invalid_request' };
    const expected = Object.fromEntries(FRAMEWORKS.map((framework) => [framework, { truncatedJson: refused, notJson: refused }]));
    const stderr = runs.map(({ framework, output }) => `${framework}: ${output.stderr}`).join('\n');
    expect(Object.fromEntries(runs.map(({ framework, result }) => [framework, result])), stderr).toEqual(expected);
  });
});

function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
