/**
 * What a process prints when the store itself failed rather than the work: SQLite's errors
 * (SQLITE_BUSY, "database is locked", a damaged file) and the store's own words for them. A fault
 * scenario counts these lines in every process's output; a busy or damaged store must not show.
 */
const STORE_ERROR = /SQLITE_|database is locked|The store .* (is busy|failed|is damaged)|Could not store/;

/** The lines of `text` that tell of a store failure, each cut to 300 characters. */
export function storeErrorLines(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => STORE_ERROR.test(line))
    .map((line) => line.slice(0, 300));
}
