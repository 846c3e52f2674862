import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScaffoldError } from './scaffold-error.js';

/** The fields of checkout-kit's own package.json that `init` reads. */
export interface KitManifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

export interface KitPackage {
  /** The folder holding checkout-kit's package.json (and `templates/`). */
  root: string;
  manifest: KitManifest;
}

function readManifest(file: string): Partial<KitManifest> | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Partial<KitManifest>;
  } catch {
    return undefined;
  }
}

/**
 * checkout-kit's package root: the nearest folder above the file URL `fromUrl` whose package.json is named
 * `checkout-kit`. Works from `src/` (tsx), from `dist/` after a build, and from node_modules.
 */
export function findKitPackage(fromUrl: string | URL = import.meta.url): KitPackage {
  const start = fileURLToPath(fromUrl);
  let dir = dirname(start);
  for (;;) {
    const manifest = readManifest(join(dir, 'package.json'));
    if (manifest?.name === 'checkout-kit' && typeof manifest.version === 'string') return { root: dir, manifest: manifest as KitManifest };
    const parent = dirname(dir);
    if (parent === dir) throw new ScaffoldError(`checkout-kit's package.json was not found above ${start}: reinstall checkout-kit.`);
    dir = parent;
  }
}
