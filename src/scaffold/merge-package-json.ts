import type { PackageRequirements } from './package-requirements.js';
import { ScaffoldError } from './scaffold-error.js';

/** What merging added, and what was already there and left alone. */
export interface PackageJsonChanges {
  added: PackageRequirements;
  /** Names already present (with whatever value or version they had): never changed. */
  kept: { scripts: string[]; dependencies: string[] };
  /** Things the user should look at, e.g. a package that is not an ES module. */
  warnings: string[];
}

export interface MergedPackageJson {
  /** The new file text; equal to the input when nothing was added. */
  text: string;
  changes: PackageJsonChanges;
}

type Manifest = Record<string, unknown>;

/** The `test` script `npm init` writes. */
const NPM_INIT_TEST = 'echo "Error: no test specified" && exit 1';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The indentation of the first indented line (spaces or a tab). @default two spaces */
function indentOf(text: string): string {
  return /^[ \t]+(?=")/m.exec(text)?.[0] ?? '  ';
}

function section(manifest: Manifest, key: string): Record<string, string> | undefined {
  const value = manifest[key];
  if (value === undefined) return undefined;
  if (!isRecord(value)) throw new ScaffoldError(`package.json: "${key}" must be an object; fix it, then run init again.`);
  return value as Record<string, string>;
}

function parseManifest(text: string): Manifest {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    throw new ScaffoldError(`package.json is not valid JSON (${(error as Error).message}); fix it, then run init again.`, { cause: error });
  }
  if (!isRecord(manifest)) throw new ScaffoldError('package.json must hold a JSON object; fix it, then run init again.');
  return manifest;
}

/**
 * Add the scaffold's scripts and dependencies to a package.json text. Existing keys are never
 * changed (a script of the same name, but npm init's placeholder `test`, or a dependency at any
 * version, in dependencies or devDependencies, is kept); new keys go at the end of their object, new objects at the end of the
 * file. Indentation, line endings and the final newline are kept, like `npm pkg set` does.
 */
export function mergePackageJson(text: string, needs: PackageRequirements): MergedPackageJson {
  const manifest = parseManifest(text);
  const changes: PackageJsonChanges = { added: { scripts: {}, dependencies: {}, devDependencies: {} }, kept: { scripts: [], dependencies: [] }, warnings: [] };
  const installed = new Set(
    ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'].flatMap((key) => Object.keys(section(manifest, key) ?? {})),
  );

  const add = (key: keyof PackageRequirements, entries: Record<string, string>, present: (name: string, value: string) => 'same' | boolean, kept: string[]) => {
    for (const [name, value] of Object.entries(entries)) {
      const there = present(name, value);
      if (there === 'same') continue;
      if (there) {
        kept.push(name);
        continue;
      }
      const target = section(manifest, key) ?? (manifest[key] = {});
      (target as Record<string, string>)[name] = value;
      changes.added[key][name] = value;
    }
  };
  const scripts = section(manifest, 'scripts') ?? {};
  // npm init's placeholder is nobody's test script: the scaffold's replaces it. A script that is
  // already the scaffold's (init run again) is not the project's own: next steps still say `npm run` it.
  add(
    'scripts',
    needs.scripts,
    (name, value) => (scripts[name] === value ? 'same' : name in scripts && !(name === 'test' && scripts[name] === NPM_INIT_TEST)),
    changes.kept.scripts,
  );
  // A dependency at the version the scaffold asks for (init run again) is not the project's own version.
  const versionOf = (name: string) => ['dependencies', 'devDependencies'].map((key) => section(manifest, key)?.[name]).find((value) => value !== undefined);
  const dependency = (name: string, value: string) => (versionOf(name) === value ? 'same' : installed.has(name));
  add('dependencies', needs.dependencies, dependency, changes.kept.dependencies);
  add('devDependencies', needs.devDependencies, dependency, changes.kept.dependencies);

  if (manifest.type !== 'module') {
    // npm 11's `npm init -y` writes "type": "commonjs": say what is there, not that nothing is.
    const found = manifest.type === undefined ? 'has no "type"' : `says "type": ${JSON.stringify(manifest.type)}`;
    changes.warnings.push(
      `package.json ${found}: the scaffold's .ts files are ES modules and will not load (npm run dev fails); set it: npm pkg set type=module (or rename them to .mts).`,
    );
  }
  const addedCount = Object.values(changes.added).reduce((count, entries) => count + Object.keys(entries).length, 0);
  if (addedCount === 0) return { text, changes };

  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const body = JSON.stringify(manifest, null, indentOf(text)).replace(/\n/g, eol);
  return { text: /\r?\n$/.test(text) ? body + eol : body, changes };
}

/** A new package.json for a folder that has none: an ES module, private, with the scaffold's needs. */
export function newPackageJson(folderName: string, needs: PackageRequirements): string {
  // npm names: lower case, URL-safe, not starting with a dot or an underscore.
  const name =
    folderName
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[._-]+/, '') || 'shop';
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: needs.scripts,
    dependencies: needs.dependencies,
    devDependencies: needs.devDependencies,
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
