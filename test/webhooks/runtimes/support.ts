import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { expect } from 'vitest';
import { SECRET } from '../helpers.js';
import { expectDeliveryFlow, NOW, post } from '../receive/delivery-flow.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));

/** What the Worker reads from its environment (bindings on workerd, env vars for Bun and Deno). */
export const WORKER_ENV = { CHECKOUT_WEBHOOK_SECRET: SECRET, NOW_MS: String(NOW.getTime()) };

/**
 * A runtime binary. Bun is a devDependency. Deno is not: the npm registry this project installs
 * from lacks deno's packages for other platforms, and `npm ci` refuses a lock file without them,
 * so `.ci/setup` installs it outside the repo (`CHECKOUT_KIT_DENO`, default
 * `~/.cache/checkout-kit/deno/node_modules/.bin/deno`). Missing means a broken setup: fail loudly,
 * never skip.
 */
export function runtimeBinary(name: 'bun' | 'deno'): string {
  if (name === 'deno') {
    const path = process.env.CHECKOUT_KIT_DENO || join(homedir(), '.cache/checkout-kit/deno/node_modules/.bin/deno');
    if (!existsSync(path)) throw new Error(`${path} is missing: run .ci/setup (it installs Deno from npm outside the repo) or set CHECKOUT_KIT_DENO.`);
    return path;
  }
  const path = join(REPO, 'node_modules/.bin', name);
  if (!existsSync(path)) throw new Error(`${path} is missing: ${name} is a devDependency of checkout-kit; run npm install.`);
  return path;
}

export interface Bundle {
  dir: string;
  file: string;
  remove(): Promise<void>;
}

/**
 * Bundle `entry` (a fixture) with checkout-kit/web into one file for a platform without Node:
 * esbuild's `neutral` platform knows no `node:` module, so any Node import on the web path fails
 * the build here, before any runtime runs it.
 */
export async function bundle(entry: string, format: 'esm' | 'iife' = 'esm'): Promise<Bundle> {
  const dir = await mkdtemp(join(tmpdir(), 'ck-runtime-'));
  const file = join(dir, format === 'esm' ? 'worker.mjs' : 'worker.js');
  const result = await build({
    entryPoints: [join(FIXTURES, entry)],
    outfile: file,
    bundle: true,
    format,
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2022',
    metafile: true,
    logLevel: 'silent',
    ...(format === 'iife' ? { globalName: 'checkoutWorker' } : {}),
  });
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs.some((input) => input.endsWith('src/web/index.ts'))).toBe(true);
  expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
  return { dir, file, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The checks every runtime must pass, against the Worker at `base`: the delivery flow (stored once
 * byte for byte, duplicate acknowledged, tampered refused), then what the Worker saw of Node.
 */
export async function expectWorkerReceives(base: string): Promise<{ Buffer: string; process: string; require: string }> {
  const read = async () => {
    const response = await fetch(`${base}/stored`);
    return (await response.json()) as {
      bodies: Record<string, string>;
      inserts: { stored: number; duplicate: number };
      globals: { Buffer: string; process: string; require: string };
    };
  };
  await expectDeliveryFlow({ send: (body, headers) => post(`${base}/webhooks/checkout`, body, headers), stored: read });
  return (await read()).globals;
}
