import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { copyTemplates, type CopyResult } from './copy-templates.js';
import { envFromSandbox, sandboxBeside, type EnvFromSandbox } from './env-from-sandbox.js';
import { DEFAULT_FRAMEWORK, type Framework } from './frameworks.js';
import { mergePackageJson, newPackageJson, type PackageJsonChanges } from './merge-package-json.js';
import { nextSteps } from './next-steps.js';
import { packageRequirements } from './package-requirements.js';
import { findKitPackage, type KitPackage } from './package-root.js';
import { ScaffoldError } from './scaffold-error.js';
import { templateFiles } from './template-files.js';

export interface ScaffoldOptions {
  /** The target folder, created if missing. */
  dir: string;
  /**
   * Overwrite files that exist (package.json is always merged, never overwritten), and `.env`
   * values that differ from a sandbox's beside the scaffold. @default false
   */
  force?: boolean;
  /** Which web framework the server file uses. @default 'fastify' */
  framework?: Framework;
  /** What relative paths in the next steps are relative to. @default process.cwd() */
  cwd?: string;
  /** checkout-kit's own package (templates and version). @default the running one */
  kit?: KitPackage;
}

export interface ScaffoldReport {
  /** Absolute target folder. */
  dir: string;
  framework: Framework;
  /** The folder did not exist and was created. */
  createdDir: boolean;
  files: CopyResult;
  packageJson: { action: 'created' | 'updated' | 'unchanged' } & PackageJsonChanges;
  /** `.env` filled from the credentials of a sandbox beside the scaffold; absent when there is none. */
  env?: EnvFromSandbox;
  nextSteps: string[];
}

async function prepareDir(dir: string): Promise<boolean> {
  const existing = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing && !existing.isDirectory()) throw new ScaffoldError(`${dir} exists and is not a folder: give init a folder.`);
  if (!existing) await mkdir(dir, { recursive: true });
  return !existing;
}

interface PackageJsonPlan {
  /** The text to write, or undefined when the file stays as it is. */
  text: string | undefined;
  flag: 'w' | 'wx';
  summary: ScaffoldReport['packageJson'];
}

/** package.json: merged when present (additions only), created otherwise. Read and checked before anything is written. */
async function planPackageJson(file: string, folderName: string, kit: KitPackage, framework: Framework): Promise<PackageJsonPlan> {
  const needs = packageRequirements(kit.manifest, framework);
  const current = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (current === undefined) {
    return {
      text: newPackageJson(folderName, needs),
      flag: 'wx',
      summary: { action: 'created', added: needs, kept: { scripts: [], dependencies: [] }, warnings: [] },
    };
  }
  const merged = mergePackageJson(current, needs);
  return merged.text === current
    ? { text: undefined, flag: 'w', summary: { action: 'unchanged', ...merged.changes } }
    : { text: merged.text, flag: 'w', summary: { action: 'updated', ...merged.changes } };
}

/**
 * `checkout-kit init`: copy the templates into `dir` by the explicit map of `templateFiles(framework)`
 * (dotfiles renamed), never overwriting without `force`, and add the scripts and dependencies the
 * scaffold needs to its package.json. A broken package.json, or a sandbox credentials file beside
 * it that cannot be read, stops it before any file is written. With a sandbox's credentials beside
 * it, `.env` gets the sandbox's connection lines (`envFromSandbox`).
 */
export async function scaffold(options: ScaffoldOptions): Promise<ScaffoldReport> {
  const dir = resolve(options.dir);
  const kit = options.kit ?? findKitPackage();
  const createdDir = await prepareDir(dir);
  const packageFile = join(dir, 'package.json');
  const framework = options.framework ?? DEFAULT_FRAMEWORK;
  const plan = await planPackageJson(packageFile, basename(dir), kit, framework);
  const cwd = options.cwd ?? process.cwd();
  const sandbox = await sandboxBeside(dir, cwd);
  const files = await copyTemplates({ from: join(kit.root, 'templates'), to: dir, files: templateFiles(framework), force: options.force ?? false });
  if (plan.text !== undefined) await writeFile(packageFile, plan.text, { flag: plan.flag });
  const packageJson = plan.summary;
  const env = sandbox && (await envFromSandbox(dir, sandbox, options.force ?? false, framework === 'partner' ? 'partner' : 'merchant'));
  return { dir, framework, createdDir, files, packageJson, ...(env ? { env } : {}), nextSteps: nextSteps(dir, cwd, packageJson.kept.scripts, framework) };
}
