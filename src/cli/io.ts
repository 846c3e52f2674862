import { printable, terminalText } from '../errors/index.js';

/** Where a command writes; injectable so commands can be tested in-process. */
export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** What commands that read their input from standard input read (`merchants credentials`). @default process.stdin */
  stdin?: NodeJS.ReadableStream;
}

export const processIO = (): CliIO => ({ stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });

/** All of standard input, as text. */
export async function readInput(io: CliIO): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin ?? process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

export function writeLine(stream: NodeJS.WritableStream, line = ''): void {
  stream.write(`${line}\n`);
}

/** Print a value as JSON (for --json) or through a human formatter. */
export function output<T>(io: CliIO, json: boolean, value: T, human: (value: T) => string): void {
  writeLine(io.stdout, json ? JSON.stringify(value, null, 2) : terminalText(human(value)));
}

/**
 * A list read with one row past `limit`, in `order` (newest first, or the order things were first
 * stored): at most `limit` rows, and for people a last line when more are stored, so a cut list is
 * not taken for all there is (`--json` gets the rows alone).
 */
export function outputList<T>(io: CliIO, json: boolean, rows: T[], limit: number, human: (rows: T[]) => string, order: 'newest' | 'first' = 'newest'): void {
  const more = rows.length > limit;
  output(io, json, rows.slice(0, limit), (list) =>
    more ? `${human(list)}\n(the ${order} ${limit}; more are stored: raise --limit to see them)` : human(list),
  );
}

/** The widest a table's error column gets. */
export const ERROR_COLUMN_WIDTH = 60;

/** `text` cut to `width` characters, the cut marked with "…": the start (where an error's cause and code are) stays. */
export function clip(text: string | undefined, width: number): string | undefined {
  if (text === undefined) return undefined;
  const characters = [...text];
  return characters.length <= width ? text : `${characters.slice(0, width - 1).join('')}…`;
}

/** A plain text table: columns padded to their widest cell. */
export function table(rows: Array<Record<string, string | number | undefined>>, columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (value: string | number | undefined) => (value === undefined ? '' : printable(String(value)));
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => cell(row[column]).length)));
  const line = (cells: string[]) =>
    cells
      .map((text, i) => text.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map((row) => line(columns.map((column) => cell(row[column]))))].join('\n');
}
