import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { silentLogger } from '../../../src/log/index.js';
import { PostgresStore, type PostgresStoreOptions } from '../../../src/store/postgres/index.js';
import { pgliteDatabase } from './pglite-database.js';

/** The server CI provides (`postgres://postgres@127.0.0.1:5432/test`); without it, PGlite. */
export const DATABASE_URL = process.env.DATABASE_URL || undefined;
export const BACKEND = DATABASE_URL ? 'PostgreSQL server' : 'PGlite';

export const randomSchema = (prefix = 'ck_test') => `${prefix}_${randomBytes(6).toString('hex')}`;

/**
 * The databases of one test file: every `store()` lives in a new schema with a random name, and
 * `dispose()` drops them all. Against a server each store has its own pool; under PGlite the whole
 * file shares one in-process instance.
 */
export class TestDatabases {
  private pglite: Promise<PGlite> | undefined;
  private admin: pg.Pool | undefined;
  private readonly schemas = new Set<string>();

  /** Run SQL outside any store (to look at tables, or set them up). */
  async query<R = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> {
    if (DATABASE_URL) {
      this.admin ??= new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
      return (await this.admin.query(text, values)).rows as R[];
    }
    return (await (await this.lite()).query<R>(text, values)).rows;
  }

  /** A `PostgresStore` (not yet opened) in a new schema, or in `schema`. */
  async store(options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
    const schema = options.schema ?? randomSchema();
    this.schemas.add(schema);
    const connection: Partial<PostgresStoreOptions> = DATABASE_URL ? { connectionString: DATABASE_URL } : { database: pgliteDatabase(await this.lite()) };
    return new PostgresStore({ logger: silentLogger, ...connection, ...options, schema });
  }

  /** The factory `storeContract` wants: a fresh open store, and a cleanup that drops its schema. */
  async fresh(): Promise<{ store: PostgresStore; cleanup(): Promise<void> }> {
    const store = await this.store();
    await store.open();
    return {
      store,
      cleanup: async () => {
        await store.close();
        await this.drop(store.schema);
      },
    };
  }

  async drop(schema: string): Promise<void> {
    await this.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    this.schemas.delete(schema);
  }

  async dispose(): Promise<void> {
    for (const schema of [...this.schemas]) await this.drop(schema);
    await this.admin?.end();
    this.admin = undefined;
    if (this.pglite) await (await this.pglite).close();
    this.pglite = undefined;
  }

  private lite(): Promise<PGlite> {
    this.pglite ??= import('@electric-sql/pglite').then(({ PGlite }) => PGlite.create());
    return this.pglite;
  }
}
