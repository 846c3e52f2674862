import { readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { parse as parseDotenv } from 'dotenv';
import { ConfigError } from '../errors/index.js';

/** An assignment line: optional `export`, the name, `=`. Comments and blank lines never match. */
const ASSIGNMENT = /^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_.-]*)\s*=/;

/** A value dotenv reads back unchanged without quotes. */
const BARE = /^[A-Za-z0-9_.:/+=@%,-]*$/;

function quoted(name: string, value: string): string {
  if (BARE.test(value)) return value;
  if (!value.includes("'") && !value.includes('\n')) return `'${value}'`;
  throw new ConfigError(`The value for ${name} holds both a quote and characters .env cannot hold unquoted: set it in the environment instead.`);
}

/**
 * `text` (a `.env` file) with `values` set: each variable's assignment lines rewritten in place, the
 * missing ones appended; every other line, comment and blank line kept as it is (line endings too).
 */
export function setDotenvValues(text: string, values: Readonly<Record<string, string>>): string {
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text === '' ? [] : text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const written = new Set<string>();
  const out = lines.map((line) => {
    const match = ASSIGNMENT.exec(line);
    const name = match?.[2];
    if (name === undefined || !Object.hasOwn(values, name)) return line;
    written.add(name);
    return `${match![1]}${name}=${quoted(name, values[name]!)}`;
  });
  const missing = Object.keys(values).filter((name) => !written.has(name));
  if (missing.length > 0 && out.length > 0 && out.at(-1)!.trim() !== '') out.push('');
  for (const name of missing) out.push(`${name}=${quoted(name, values[name]!)}`);
  return `${out.join(newline)}${newline}`;
}

/** What `writeDotenvValues` did. */
export interface DotenvWrite {
  /** The file written (or left as it was). */
  file: string;
  /** It did not exist: it was started from the template when there is one. */
  created: boolean;
  /** Variables given a new value. */
  set: string[];
  /** Variables that already held the value. */
  unchanged: string[];
  /** Variables holding another value, left as they were (`replace: false`). */
  kept: string[];
}

export interface WriteDotenvOptions {
  /** A file to start from when `file` does not exist (e.g. `.env.example`); skipped when missing. */
  template?: string;
  /** Replace a variable that holds another value. When false, the values a new file takes from the template are still replaced. @default true */
  replace?: boolean;
}

async function readIfPresent(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
}

/**
 * Set `values` in the `.env` file `file` (see `setDotenvValues`), written whole and renamed into
 * place with mode 0600: it holds secrets, and a reader never sees half a file.
 */
export async function writeDotenvValues(file: string, values: Readonly<Record<string, string>>, options: WriteDotenvOptions = {}): Promise<DotenvWrite> {
  const current = await readIfPresent(file);
  const base = current ?? (options.template === undefined ? undefined : await readIfPresent(options.template)) ?? '';
  const existing = parseDotenv(base);
  const report: DotenvWrite = { file, created: current === undefined, set: [], unchanged: [], kept: [] };
  for (const [name, value] of Object.entries(values)) {
    const present = existing[name]?.trim();
    if (present === value) report.unchanged.push(name);
    // Only the user's own values are kept: a template's placeholder (the default sandbox URL) is not one.
    else if (present && options.replace === false && current !== undefined) report.kept.push(name);
    else report.set.push(name);
  }
  if (!report.created && report.set.length === 0) return report;
  const text = setDotenvValues(base, Object.fromEntries(report.set.map((name) => [name, values[name]!])));
  // Through a symlinked .env to the file it names.
  const target = current === undefined ? file : await realpath(file);
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o600 });
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return report;
}
