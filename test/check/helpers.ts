import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { CheckReport, ScenarioReport } from '../../src/check/index.js';
import { runCli, TSX_LOADER } from '../support/cli.js';
import { KIT_ENTRIES } from '../support/scaffold.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** `node --import tsx FILE`, as a shell line for `check --start`. */
export const tsxCommand = (file: string) => `${JSON.stringify(process.execPath)} --import ${JSON.stringify(TSX_LOADER)} ${JSON.stringify(file)}`;

/**
 * `checkout-kit init` (or `init --partner`) into `dir`, then make `checkout-kit` and `fastify` resolvable there without an
 * install: `checkout-kit` points at this repository's sources (run through tsx), `fastify` at ours.
 */
export async function scaffoldShop(dir: string, options: { partner?: boolean } = {}): Promise<void> {
  const init = await runCli(['init', dir, ...(options.partner ? ['--partner'] : []), '--json'], { cwd: REPO });
  expect(init.code, init.stderr).toBe(0);
  const kit = join(dir, 'node_modules', 'checkout-kit');
  await mkdir(kit, { recursive: true });
  // One file per entry (`checkout-kit/fastify` → fastify.ts), each re-exporting the entry's source.
  const exports: Record<string, string> = {};
  for (const [specifier, source] of Object.entries(KIT_ENTRIES)) {
    const subpath = `.${specifier.slice('checkout-kit'.length)}`;
    const file = subpath === '.' ? 'index.ts' : `${subpath.slice(2)}.ts`;
    exports[subpath] = `./${file}`;
    await writeFile(join(kit, file), `export * from ${JSON.stringify(source)};\n`);
  }
  await writeFile(join(kit, 'package.json'), JSON.stringify({ name: 'checkout-kit', type: 'module', exports }));
  await symlink(join(REPO, 'node_modules', 'fastify'), join(dir, 'node_modules', 'fastify'), 'dir');
}

/** The report of `check --json`, with the process's output in the assertion message. */
export function reportOf(result: { code: number | null; stdout: string; stderr: string }): CheckReport {
  try {
    return JSON.parse(result.stdout) as CheckReport;
  } catch {
    throw new Error(`check printed no JSON report (exit ${result.code}): ${result.stdout}\n${result.stderr}`);
  }
}

export function scenario(report: CheckReport, name: ScenarioReport['scenario']): ScenarioReport {
  const found = report.scenarios.find((candidate) => candidate.scenario === name);
  if (!found) throw new Error(`no scenario ${name} in the report`);
  return found;
}
