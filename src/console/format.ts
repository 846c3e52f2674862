/** How long ago `iso` was, on the console's clock: `42 s`, `5 min`, `3 h`, `2 d`. */
export function age(iso: string | undefined, now: Date): string {
  if (iso === undefined) return '—';
  const ms = now.getTime() - Date.parse(iso);
  if (Number.isNaN(ms)) return '—';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/** An ISO time as `2026-01-31 14:05:09Z` (seconds are what an operator compares). */
export function when(iso: string | undefined): string {
  if (iso === undefined) return '—';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** Thousands separated, for counts. */
export const count = (n: number) => n.toLocaleString('en-US');
