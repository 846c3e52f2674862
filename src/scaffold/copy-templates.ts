import { constants, existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { ScaffoldError } from './scaffold-error.js';

export interface CopyTemplatesOptions {
  /** The `templates/` folder. */
  from: string;
  /** The target folder (created if missing). */
  to: string;
  files: ReadonlyArray<readonly [source: string, destination: string]>;
  /** Overwrite existing files. @default false */
  force?: boolean;
}

/** Destinations (relative to the target) by what happened to them. */
export interface CopyResult {
  written: string[];
  overwritten: string[];
  skipped: string[];
  /** Tests not written: they import files the target already had (`kept`), which are not the scaffold's. */
  withheld: Array<{ file: string; kept: string[] }>;
}

/** The files of the target a test template imports (`'../src/server.js'` from `test/x.test.ts` is `src/server.ts`). */
function importedBy(template: string, destination: string): string[] {
  const text = readFileSync(template, 'utf8');
  return [...text.matchAll(/from '(\.{1,2}\/[^']+)'/g)].map((match) => posix.join(posix.dirname(destination), match[1]!).replace(/\.js$/, '.ts'));
}

const isCode = (error: unknown, code: string) => (error as NodeJS.ErrnoException | undefined)?.code === code;

/**
 * Copy each `[source, destination]`. Without `force` an existing destination is left byte for byte
 * as it was and reported as skipped; the check and the write are one exclusive copy, so a file
 * appearing meanwhile is not overwritten either.
 */
export async function copyTemplates(options: CopyTemplatesOptions): Promise<CopyResult> {
  const result: CopyResult = { written: [], overwritten: [], skipped: [], withheld: [] };
  // The project's own files, which the copy leaves as they are: a scaffold test of them would fail.
  const theirs = new Set(
    options.force ? [] : options.files.map(([, destination]) => destination).filter((destination) => existsSync(join(options.to, destination))),
  );
  for (const [source, destination] of options.files) {
    const target = join(options.to, destination);
    if (destination.endsWith('.test.ts') && !theirs.has(destination)) {
      const kept = importedBy(join(options.from, source), destination).filter((file) => theirs.has(file));
      if (kept.length > 0) {
        result.withheld.push({ file: destination, kept });
        continue;
      }
    }
    await mkdir(dirname(target), { recursive: true });
    try {
      await copyFile(join(options.from, source), target, constants.COPYFILE_EXCL);
      result.written.push(destination);
      continue;
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw new ScaffoldError(`Could not write ${target}: ${(error as Error).message}`, { cause: error });
    }
    if (!options.force) {
      result.skipped.push(destination);
      continue;
    }
    try {
      await copyFile(join(options.from, source), target);
    } catch (error) {
      throw new ScaffoldError(`Could not overwrite ${target}: ${(error as Error).message}`, { cause: error });
    }
    result.overwritten.push(destination);
  }
  return result;
}
