import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { sampleEvent } from '../store/fixtures/sample-event.js';

afterEach(removeTempDirs);

/** A shop folder with an embedded store of `count` events at `.checkout-kit`. */
async function shop(count: number) {
  const cwd = await tempDir('ck-store-cli-');
  const dir = join(cwd, '.checkout-kit');
  const store = new SqliteStore({ dir });
  await store.open();
  for (let i = 0; i < count; i++) await store.insertEvent(sampleEvent(`evt_${i}`));
  await store.close();
  return { cwd, dir, journal: join(dir, 'journal-0.jsonl'), env: { CHECKOUT_STORE: 'file:.checkout-kit' } };
}

/** Overwrite `count` bytes of the `line`-th line (from 0) with NUL bytes, `at` bytes into it. */
async function zeroLine(path: string, line: number, at = 100, count = 64): Promise<number> {
  const bytes = await readFile(path);
  let start = 0;
  for (let i = 0; i < line; i++) start = bytes.indexOf(10, start) + 1;
  bytes.fill(0, start + at, start + at + count);
  await writeFile(path, bytes);
  return start;
}

describe('checkout-kit store check', () => {
  it('exits 0 and says healthy for a healthy store, with every file listed', async () => {
    const { cwd, env } = await shop(3);
    const result = await runCli(['store', 'check'], { cwd, env });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^store .*\.checkout-kit: healthy\n {2}snapshot\.json +none\n {2}journal-0\.jsonl +current, 3 line\(s\), [\d.]+ KiB, bodies of 3 event\(s\)\n$/);
  });

  it('exits 1 for a damaged store, one line per problem, and names the file, byte offset and reason', async () => {
    const { cwd, env, journal } = await shop(5);
    const offset = await zeroLine(journal, 2);
    const result = await runCli(['store', 'check'], { cwd, env });
    expect(result.code).toBe(1);
    const problems = result.stdout.split('\n').filter((line) => /^(damage|warning): /.test(line));
    expect(problems).toEqual([expect.stringMatching(new RegExp(`^damage: journal-0\\.jsonl: damaged line at byte ${offset} \\([\\d.]+ KiB\\): 64 NUL bytes from byte 100 of the line; not JSON .*\\(it looks like event evt_2\\); 2 readable line\\(s\\).*follow it; the store will not open\\.$`))]);
    expect(result.stdout).toMatch(/^store .*: DAMAGED \(it will not open\)$/m);
    expect(result.stdout).toMatch(/^recover: `checkout-kit store recover` would cut journal-0\.jsonl from .* Keeps 2 event\(s\); drops 3 line\(s\), .* holding 2 event\(s\) \(evt_3, evt_4: acknowledged deliveries/m);

    const json = await runCli(['store', 'check', '--json'], { cwd, env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'damaged', opens: false, problems: [{ severity: 'damage', kind: 'damaged-line', file: 'journal-0.jsonl', offset }] });
  });

  it('is not applicable to PostgreSQL or memory stores: exit 2 with one line', async () => {
    const cwd = await tempDir('ck-store-cli-');
    for (const [store, pattern] of [
      ['postgres://user:secret@127.0.0.1:5432/shop', /^checkout-kit: store check is for the embedded store \(CHECKOUT_STORE=file:<dir>\), not applicable to a postgres: store: PostgreSQL keeps its own integrity/],
      ['memory:', /not applicable to a memory: store: it keeps nothing on disk/],
    ] as const) {
      const result = await runCli(['store', 'check'], { cwd, env: { CHECKOUT_STORE: store } });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(pattern);
      expect(result.stderr).not.toContain('secret');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    const recover = await runCli(['store', 'recover'], { cwd, env: { CHECKOUT_STORE: 'postgres://127.0.0.1/shop' } });
    expect(recover.code).toBe(2);
  });

  it('exits 2 when the store folder does not exist, and does not create it', async () => {
    const cwd = await tempDir('ck-store-cli-');
    const result = await runCli(['store', 'check', '--dir', 'missing'], { cwd });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/^checkout-kit: There is no store at .*missing: the folder does not exist/);
    expect(await readdir(cwd)).toEqual([]);
  });
});

describe('checkout-kit store check: handler completions a recovery drops', () => {
  it("names the handler runs whose completion is after the damage, since serve or reconcile would call them again", async () => {
    const { cwd, dir, journal, env } = await shop(2);
    const store = new SqliteStore({ dir });
    await store.open();
    for (const key of ['payment:p_0:paid', 'payment:p_1:paid']) {
      await store.enqueueRun({ key, kind: 'fulfillment', data: {} });
      await store.claimRun(key, { owner: 'w', leaseMs: 60_000 });
      await store.completeRun(key, 'w');
    }
    await store.close();
    // Line 1 (evt_1) damaged: every line after it, both completions included, would be dropped.
    await zeroLine(journal, 1);
    const result = await runCli(['store', 'check'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/2 handler run\(s\) lose their completion \(payment:p_0:paid, payment:p_1:paid\): the store will hold them as not done, and serve or reconcile calls those handlers again/);
    // The refusal to open says where to go next.
    const events = await runCli(['events', 'list'], { cwd, env });
    expect(events.stderr).toMatch(/run `checkout-kit store check` to see what a recovery would keep and drop, and `checkout-kit store recover`/);
  });
});

describe('checkout-kit store recover', () => {
  it('does nothing to a healthy store and says so', async () => {
    const { cwd, env, dir } = await shop(2);
    const before = await readdir(dir);
    const result = await runCli(['store', 'recover'], { cwd, env });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/: healthy; no file was changed\n$/);
    expect(await readdir(dir)).toEqual(before);
  });

  it('--dry-run prints the plan and changes nothing; then recover prints what changed and where the copy is, and check is clean', async () => {
    const { cwd, env, dir, journal } = await shop(6);
    const offset = await zeroLine(journal, 4);
    const damaged = await readFile(journal);

    const dry = await runCli(['store', 'recover', '--dry-run'], { cwd, env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/recovery plan \(dry run, nothing changed\)\nwas: journal-0\.jsonl: damaged line at byte \d+.*\nwould: cut journal-0\.jsonl /);
    expect(await readFile(journal)).toEqual(damaged);
    expect((await readdir(dir)).filter((name) => name.startsWith('recovery-'))).toEqual([]);

    const result = await runCli(['store', 'recover'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^did: cut journal-0\\.jsonl from [\\d.]+ KiB to [\\d.]+ KiB \\(keeps the 4 line\\(s\\) before the damaged line at byte ${offset} `, 'm'));
    expect(result.stdout).toMatch(/^Keeps 4 event\(s\); drops 2 line\(s\), [\d.]+ KiB holding 1 event\(s\) \(evt_5: /m);
    const backup = /^copy of every changed file: (.*)$/m.exec(result.stdout)?.[1];
    expect(backup).toMatch(new RegExp(`^${dir}/recovery-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z$`));
    expect(await readFile(join(backup!, 'journal-0.jsonl'))).toEqual(damaged);
    expect(JSON.parse(await readFile(join(backup!, 'recovery.json'), 'utf8'))).toMatchObject({ actions: [{ kind: 'truncate', toBytes: offset }] });
    expect(result.stdout).toMatch(/the store opens again\n$/);

    expect((await runCli(['store', 'check'], { cwd, env })).code).toBe(0);
    const events = await runCli(['events', 'list', '--json'], { cwd, env });
    expect(JSON.parse(events.stdout).map((event: { id: string }) => event.id).sort()).toEqual(['evt_0', 'evt_1', 'evt_2', 'evt_3']);
  });

  it('events list writes control characters of ids as escapes: one row per event, no escape sequence reaches the terminal', async () => {
    const { cwd, dir, env } = await shop(0);
    const store = new SqliteStore({ dir });
    await store.open();
    await store.insertEvent(sampleEvent('evt_a\nb\u001b[31mred\u009b'));
    await store.close();
    const result = await runCli(['events', 'list'], { cwd, env });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/^evt_a\\nb\\u001b\[31mred\\u009b /);
    expect(result.stdout).not.toMatch(/[\u001b\u009b]/);
  });

  it('says a store path that is a file is not a folder, in one line, and leaves the file alone', async () => {
    const cwd = await tempDir('ck-store-cli-');
    await writeFile(join(cwd, 'not-a-folder'), 'mine');
    for (const store of ['file:not-a-folder', 'file:not-a-folder/store']) {
      const result = await runCli(['events', 'list'], { cwd, env: { CHECKOUT_STORE: store } });
      expect(result.code, store).toBe(1);
      expect(result.stderr, store).toBe(
        `checkout-kit: Cannot open the store ${join(cwd, store.slice('file:'.length))}: it (or a folder above it) is a file, not a folder. Point the store at a folder (CHECKOUT_STORE=file:<dir>).\n`,
      );
    }
    expect(await readFile(join(cwd, 'not-a-folder'), 'utf8')).toBe('mine');
  });

  it('names a damaged snapshot in one whole line, advice included, when the parser quotes a line break', async () => {
    const { cwd, env, dir } = await shop(1);
    await writeFile(join(dir, 'snapshot.json'), 'garbage\n');
    const result = await runCli(['events', 'list'], { cwd, env });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/snapshot\.json is damaged \(not valid JSON: .*garbage\\n.*\)\. The file was left untouched\. Restore the store folder from a backup, or move it aside to start with an empty store\.$/);
    expect(await readFile(join(dir, 'snapshot.json'), 'utf8')).toBe('garbage\n');
  });

  it('refuses with exit 1 and one line when the snapshot cannot be rebuilt', async () => {
    const { cwd, env, dir } = await shop(1);
    await writeFile(join(dir, 'snapshot.json'), 'garbage');
    await writeFile(join(dir, 'journal-3.jsonl'), '');
    await rm(join(dir, 'journal-0.jsonl'));
    const result = await runCli(['store', 'recover', '--json'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^checkout-kit: Cannot recover the store .*snapshot\.json is damaged and it cannot be rebuilt from the journals: .*Nothing was changed\.\n$/);
  });
});
