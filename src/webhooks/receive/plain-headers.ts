import type { HeaderBag } from '../verify/header-value.js';

const SENSITIVE = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** Headers as a plain string record, without credentials: what a dead letter keeps for inspection. */
export function plainHeaders(headers: HeaderBag): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (name: string, value: string | readonly string[] | undefined) => {
    const key = name.toLowerCase();
    if (value !== undefined && !SENSITIVE.has(key)) out[key] = typeof value === 'string' ? value : value.join(', ');
  };
  const iterable = headers as { forEach?: (callback: (value: string, name: string) => void) => void };
  if (typeof iterable.forEach === 'function') iterable.forEach((value, name) => add(name, value));
  else for (const [name, value] of Object.entries(headers as Readonly<Record<string, string | readonly string[] | undefined>>)) add(name, value);
  return out;
}
