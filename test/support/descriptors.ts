import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * The files under `dir` this process holds open, each with its open flags (fdinfo, octal). Linux
 * only (`/proc/self/fd`): callers skip elsewhere.
 */
export async function openDescriptors(dir: string): Promise<Map<string, number>> {
  const flags = new Map<string, number>();
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (!target.startsWith(`${dir}/`)) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '');
    const octal = /^flags:\s+([0-7]+)/m.exec(info)?.[1];
    if (octal) flags.set(target.slice(dir.length + 1), parseInt(octal, 8));
  }
  return flags;
}
