import { readFile, writeFile } from 'node:fs/promises';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createHealth, healthRoutes } from '../../src/health/index.js';
import { SqliteStore, type Store } from '../../src/store/index.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { storedEvent, T0 } from '../console/seed.js';
import { pageSize, storeFiles, tableLeafPageHolding } from '../faults/support/sqlite-file.js';

afterEach(() => removeTempDirs());

async function routes(store: Store, clock: () => Date) {
  const app = Fastify();
  await app.register(healthRoutes, { health: createHealth({ store, clock, maxBacklogAgeMs: 120_000, probeCacheMs: 0 }) });
  return app;
}

describe('/healthz and /readyz', () => {
  it('is ready with a writable store and a young backlog, and says why not once the backlog is too old', async () => {
    const store = new SqliteStore({ dir: await tempDir('ck-health-') });
    await store.open();
    let now = T0;
    const app = await routes(store, () => new Date(now));
    await store.insertEvent(storedEvent({ id: 'evt_1' }), new Date(T0));
    now += 60_000;
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      ready: true,
      checks: { store: { ok: true, writable: true, caughtUp: true }, backlog: { ok: true, pending: 1, oldestAgeSeconds: 60, limitSeconds: 120 } },
      reasons: [],
    });
    now += 90_000;
    const stale = await app.inject('/readyz');
    expect(stale.statusCode).toBe(503);
    expect(stale.json()).toMatchObject({
      ready: false,
      checks: { backlog: { ok: false, oldestAgeSeconds: 150 } },
      reasons: [expect.stringMatching(/has waited 150 s \(limit 120 s\): dispatch is not keeping up/)],
    });
    await app.close();
    await store.close();
  });

  it('is not ready when the store takes no writes, and stays alive', async () => {
    const store = new SqliteStore({ dir: await tempDir('ck-health-') });
    await store.open();
    const app = await routes(store, () => new Date(T0));
    await store.close();
    const response = await app.inject('/readyz');
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ ready: false, checks: { store: { ok: false, writable: false, caughtUp: false } } });
    expect(response.json().reasons).toEqual([
      expect.stringMatching(/^the store does not take writes: The store .* is closed/),
      expect.stringMatching(/^the store cannot be read up to date/),
    ]);
    expect((await app.inject('/healthz')).json()).toEqual({ ok: true });
    await app.close();
  });

  it('is not ready once the store has found damage in its file: nothing more is written to it', async () => {
    const dir = await tempDir('ck-health-');
    const seeded = new SqliteStore({ dir });
    await seeded.open();
    for (let i = 0; i < 200; i++) await seeded.insertEvent(storedEvent({ id: `evt_${i}`, body: JSON.stringify({ id: `evt_${i}`, pad: 'x'.repeat(200) }) }));
    await seeded.close();
    // A page of event rows overwritten, as a failing disk would.
    const { db } = storeFiles(dir);
    const bytes = await readFile(db);
    const page = tableLeafPageHolding(bytes, '{"id":"evt_150",');
    expect(page).toBeGreaterThan(1);
    bytes.fill(0xff, (page - 1) * pageSize(bytes), page * pageSize(bytes));
    await writeFile(db, bytes);

    const store = new SqliteStore({ dir });
    await store.open();
    const app = await routes(store, () => new Date(T0));
    // Opening reads no event row: the damage is not known yet, and a write elsewhere in the file succeeds.
    expect(await store.acquireLock('probe', 'me', 1)).toBe(true);
    await expect(store.listEvents({ limit: 1000 })).rejects.toThrow(/is damaged/);
    const damaged = await app.inject('/readyz');
    expect(damaged.statusCode).toBe(503);
    expect(damaged.json().reasons).toContainEqual(expect.stringMatching(/^the store does not take writes: The store .* is damaged/));
    await expect(store.insertEvent(storedEvent({ id: 'evt_after' }))).rejects.toThrow(/is damaged/);
    await app.close();
    await store.close();
  });
});
