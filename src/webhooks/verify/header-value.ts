import type { HeaderGetter } from '../schemes/scheme.js';

/**
 * Request headers as any framework hands them: a Web `Headers` (or anything with `get`), or a Node
 * style record (`IncomingHttpHeaders`, lower-case keys; other casings are found too).
 */
export type HeaderBag =
  | {
      /** A header's value by name, `null` when absent. */
      get(name: string): string | null;
    }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

function isGetter(headers: HeaderBag): headers is { get(name: string): string | null } {
  return typeof (headers as { get?: unknown }).get === 'function';
}

function flatten(value: string | readonly string[] | undefined | null): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'string' ? value : value.join(', ');
  return text === '' ? undefined : text;
}

/** A reader of `headers` by lower-case name. Empty values read as absent. */
export function headerGetter(headers: HeaderBag): HeaderGetter {
  if (isGetter(headers)) return (name) => flatten(headers.get(name));
  const record = headers;
  return (name) => {
    const direct = record[name];
    if (direct !== undefined) return flatten(direct);
    // Node lower-cases header names; a hand-built object may not have.
    for (const key of Object.keys(record)) if (key.toLowerCase() === name) return flatten(record[key]);
    return undefined;
  };
}
