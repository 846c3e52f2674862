import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Every `.ts` file under `dir`. */
async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => join(entry.parentPath, entry.name));
}

/** The files of `src/` each one imports, re-exports included (type-only imports too: a circle of types is still a circle to read). */
async function importGraph(): Promise<Map<string, string[]>> {
  const files = await sources(SRC);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    const targets = [...text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)]
      .map((match) => resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')))
      .filter((target) => files.includes(target));
    graph.set(file, targets);
  }
  return graph;
}

/** One import cycle, as paths relative to `src/`, or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file];
    state.set(file, 'open');
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      const cycle = visit(target);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle.map((each) => relative(SRC, each));
  }
  return undefined;
}

describe('src/ imports', () => {
  it('form no cycle anywhere (e.g. commands share Register through register.ts, the schemes their rules through schemes/rules.ts)', async () => {
    const graph = await importGraph();
    expect(graph.size).toBeGreaterThan(300);
    expect(findCycle(graph)).toBeUndefined();
  });

  it('the check finds a cycle when there is one', () => {
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    expect(
      findCycle(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual(['a.ts', 'b.ts', 'a.ts']);
  });
});
