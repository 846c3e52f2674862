import { execFileSync } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/index.js';
import { execCli, spawnCli, stopProcess, waitForLine } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { sqliteStoreAtVersionOne } from '../store/helpers.js';

const ROOT = process.getuid?.() === 0;
/** Paths made immutable (as root), made mutable again before the folders are removed. */
const immutable: string[] = [];

afterEach(async () => {
  for (const path of immutable.splice(0)) execFileSync('chattr', ['-i', path]);
  await removeTempDirs();
});

/**
 * Make `path` (a file or folder) unwritable to this user: a mode without write for a user, `chattr +i`
 * for root, whom modes do not stop. False where that cannot be done (no chattr, a file system without it).
 */
function makeUnwritable(path: string, mode: number): Promise<boolean> | boolean {
  if (!ROOT) return chmod(path, mode).then(() => true);
  try {
    execFileSync('chattr', ['+i', path], { stdio: 'ignore' });
    immutable.push(path);
    return true;
  } catch {
    return false;
  }
}

const NOT_WRITABLE = (what: string) =>
  new RegExp(
    `^checkout-kit: (Could not migrate SQLite .*: )?The store .*store\\.sqlite is not writable by this user \\(not writable: [^;]*${what}[^;]*; SQLite: [^)]+\\)\\. Check the owner and permissions of the store's folder and files .*, and run checkout-kit as the user that owns them\\.\\n$`,
  );

describe('a store this user cannot write', () => {
  it('migrate of a store whose file is read-only says so in one line, exit 1, and leaves the file as it was', async (context) => {
    const dir = await tempDir('ck-unwritable-');
    await sqliteStoreAtVersionOne(dir);
    const file = join(dir, 'store.sqlite');
    const before = await readFile(file);
    if (!(await makeUnwritable(file, 0o444))) return context.skip();
    const result = await execCli(['migrate'], { cwd: dir, env: { CHECKOUT_STORE: `file:${dir}` } });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(NOT_WRITABLE('store\\.sqlite'));
    expect(await readFile(file)).toEqual(before);
  });

  it('events list of a store whose folder is read-only says the folder is not writable, in one line, exit 1', async (context) => {
    const dir = await tempDir('ck-unwritable-');
    const store = new SqliteStore({ dir: join(dir, 'store') });
    await store.open();
    await store.close();
    if (!(await makeUnwritable(join(dir, 'store'), 0o555))) return context.skip();
    const result = await execCli(['events', 'list'], { cwd: dir, env: { CHECKOUT_STORE: 'file:store' } });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(NOT_WRITABLE(`its folder ${join(dir, 'store')}`));
  });

  it('events list of a store on a file system mounted read-only points at the disk, not at owners', async (context) => {
    const mountPoint = await tempDir('ck-readonly-mount-');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      return context.skip(); // mounting needs root with CAP_SYS_ADMIN
    }
    try {
      const store = new SqliteStore({ dir: join(mountPoint, 'store') });
      await store.open();
      await store.close();
      execFileSync('mount', ['-o', 'remount,ro', mountPoint]);
      const result = await execCli(['events', 'list'], { cwd: mountPoint, env: { CHECKOUT_STORE: 'file:store' } });
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        /^checkout-kit: The store .*store\.sqlite is on a file system mounted read-only \(not writable: [^)]*\)\. Check the disk \(`dmesg`\) and how it is mounted\.\n$/,
      );
    } finally {
      execFileSync('umount', [mountPoint]);
    }
  });

  // Only root can take write access from a file a running process has open (chattr +i); a mode
  // change does not reach an open file.
  it.runIf(ROOT)(
    "serve whose store's write-ahead log stops being writable while it runs: /readyz says the store is not writable, not a bare I/O error",
    async (context) => {
      const cwd = await tempDir('ck-unwritable-');
      await writeFile(join(cwd, 'fulfillment.mjs'), 'export default { async paid() {} };\n');
      const port = await freePort();
      const serve = spawnCli(['serve', '--port', String(port)], {
        cwd,
        env: {
          CHECKOUT_STORE: 'file:.checkout-kit',
          // Nothing listens there: serve starts without the service.
          CHECKOUT_BASE_URL: 'http://127.0.0.1:9',
          CHECKOUT_API_KEY: 'svc_mk_test_abcdefabcdefabcdefabcdef',
          CHECKOUT_SIGNING_SECRET: 'svc_ms_abcdefabcdefabcdefabcdef',
          CHECKOUT_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          LOG_LEVEL: 'error',
        },
      });
      try {
        await waitForLine(serve, /listening on/);
        const wal = join(cwd, '.checkout-kit', 'store.sqlite-wal');
        if (!(await makeUnwritable(wal, 0o444))) return context.skip();
        const reasons = async () => ((await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { reasons: string[] }).reasons;
        await expect
          .poll(reasons)
          .toEqual([
            expect.stringMatching(
              /^the store does not take writes: The store .*store\.sqlite is not writable by this user \(not writable: store\.sqlite-wal; SQLite: disk I\/O error\)\. Check the owner and permissions/,
            ),
          ]);
      } finally {
        for (const path of immutable.splice(0)) execFileSync('chattr', ['-i', path]);
        await stopProcess(serve);
      }
    },
  );
});

describe('a store whose disk is full (a tmpfs of its own)', () => {
  /** A 2 MiB tmpfs holding a store at schema version 1, filled up to `room` bytes free; undefined where mounting is not allowed. */
  async function fullDisk(room: number): Promise<{ mountPoint: string; dir: string; filler: string } | undefined> {
    const mountPoint = await tempDir('ck-full-disk-');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint], { stdio: 'ignore' });
    } catch {
      return undefined; // mounting needs root with CAP_SYS_ADMIN
    }
    mounted.push(mountPoint);
    const dir = join(mountPoint, 'store');
    await mkdir(dir);
    await sqliteStoreAtVersionOne(dir);
    const filler = join(mountPoint, 'filler');
    const { bavail, bsize } = statfsSync(mountPoint);
    await writeFile(filler, Buffer.alloc(Math.max(0, bavail * bsize - room)));
    return { mountPoint, dir, filler };
  }
  const mounted: string[] = [];
  afterEach(() => {
    for (const mountPoint of mounted.splice(0)) execFileSync('umount', [mountPoint]);
  });

  const FULL =
    /^checkout-kit: The disk holding .*store.* is full, so migrate stopped \(each version is applied whole or not at all; those applied before it stay\)\. Free some space, then run `checkout-kit migrate` again\.\n$/;

  it.for([
    ['room for no page of a migration', 64 * 1024],
    ['no room at all', 0],
  ] as const)('migrate with %s says the disk is full in one line, exit 1; once there is room it migrates', async ([, room], context) => {
    const disk = await fullDisk(room);
    if (!disk) return context.skip();
    const env = { CHECKOUT_STORE: `file:${disk.dir}` };
    const full = await execCli(['migrate'], { cwd: disk.mountPoint, env });
    expect(full).toMatchObject({ code: 1, stdout: '' });
    expect(full.stderr).toMatch(FULL);
    await rm(disk.filler);
    const migrated = await execCli(['migrate', '--json'], { cwd: disk.mountPoint, env });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect((JSON.parse(migrated.stdout) as { applied: unknown[] }).applied.length).toBeGreaterThan(0);
  });
});
