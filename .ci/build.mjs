#!/usr/bin/env node
/**
 * `npm run build` (and `prepare`): the ES modules and their declarations from `tsc`, then the
 * CommonJS face of every entry that package.json's `exports` names:
 *
 * - `dist/…/index.cjs`, a `require()` of the ES module beside it. Node 20.19+ and 22.12+ load ES
 *   modules through `require()`, so CommonJS and ESM consumers share one copy of the code (one
 *   `ConfigError` class, one store module): no second build to keep equal, no dual-package hazard.
 * - a `.d.cts` beside every `.d.ts`, its relative imports renamed `.js` -> `.cjs`, so TypeScript
 *   sees CommonJS declarations under `require` (`moduleResolution` node16/nodenext).
 *
 * dist/ is emptied first: what `files` ships is what this build wrote, nothing left from another.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';

const DIST = 'dist';

rmSync(DIST, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

const { bin, exports } = JSON.parse(readFileSync('package.json', 'utf8'));
// tsc writes files 0644: a clone linked into a shop (npm install ../checkout-kit) runs its bin as it
// is, and npm made it executable only when it installed the link, before this build replaced it.
for (const path of Object.values(bin)) chmodSync(path, 0o755);

/** `./dist/x/index.js` -> `./dist/x/index.cjs`, `./dist/x/index.d.ts` -> `./dist/x/index.d.cts`. */
const commonJsOf = (path) => path.replace(/\.js$/, '.cjs').replace(/\.d\.ts$/, '.d.cts');

for (const [subpath, { import: esm, require: cjs }] of Object.entries(exports)) {
  for (const key of ['types', 'default']) {
    if (cjs?.[key] !== commonJsOf(esm[key])) {
      throw new Error(`package.json exports["${subpath}"].require.${key} must be ${commonJsOf(esm[key])}, beside exports["${subpath}"].import.${key}`);
    }
  }
  writeFileSync(
    cjs.default,
    `'use strict';
// checkout-kit is written as ES modules; Node 20.19+ and 22.12+ load them through require().
try {
  module.exports = require('./${basename(esm.default)}');
} catch (error) {
  if (error && error.code === 'ERR_REQUIRE_ESM') {
    throw new Error(\`require('checkout-kit') needs Node 20.19+ or 22.12+, which load ES modules through require(); this is Node \${process.version}: upgrade Node, or use import().\`, { cause: error });
  }
  throw error;
}
`,
  );
}

/** Relative module specifiers of a declaration file: `from './x.js'`, `import("../y.js")`. */
const RELATIVE_JS = /((?:from|import\()\s*)(['"])(\.{1,2}\/[^'"]*)\.js\2/g;
for (const entry of readdirSync(DIST, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const path = join(entry.parentPath, entry.name);
  writeFileSync(commonJsOf(path), readFileSync(path, 'utf8').replace(RELATIVE_JS, '$1$2$3.cjs$2'));
}
