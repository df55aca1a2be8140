// The metadata store contract: every transport (PGlite, PostgreSQL) must pass these same tests,
// because services write their SQL once and never ask which transport runs it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { MetadataStore } from '../../lib/stores/metadata/index.ts';
import { METADATA_MIGRATIONS } from './migration-files.ts';

/** A fresh directory under the OS temp dir, and the way to remove it. */
export async function tempDataDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-meta-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

const HOSTILE = "'; DROP TABLE instance_settings; --";

export function metadataStoreContract(name: string, open: () => Promise<MetadataStore>): void {
  describe(`metadata store contract: ${name}`, () => {
    const opened: MetadataStore[] = [];
    const openStore = async () => {
      const store = await open();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    describe('migrate', () => {
      it('records each applied migration once, with its name and time', async () => {
        const store = await openStore();
        const { rows } = await store.query<{ version: number; name: string; applied_at: Date }>(
          'SELECT version, name, applied_at FROM schema_migrations ORDER BY version',
        );
        expect(rows.map((r) => [r.version, r.name])).toEqual(METADATA_MIGRATIONS.map((m) => [m.version, m.name]));
        expect(rows[0].applied_at).toBeInstanceOf(Date);
      });

      it('applies nothing when run again', async () => {
        const store = await openStore();
        await expect(store.migrate()).resolves.toEqual({ applied: [] });
        await expect(store.migrate()).resolves.toEqual({ applied: [] });
        const { rows } = await store.query('SELECT version FROM schema_migrations');
        expect(rows).toEqual(METADATA_MIGRATIONS.map((m) => ({ version: m.version })));
      });

      it('creates the instance tables', async () => {
        const store = await openStore();
        const { rows } = await store.query<{ table_name: string }>(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
        );
        expect(rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['instance_settings', 'leader_epochs', 'schema_migrations']));
      });
    });

    describe('query', () => {
      it('binds parameters, so hostile text is stored verbatim and runs nothing', async () => {
        const store = await openStore();
        await store.query('INSERT INTO instance_settings (key, value) VALUES ($1, $2)', [HOSTILE, { note: HOSTILE }]);
        const { rows } = await store.query('SELECT key, value FROM instance_settings WHERE key = $1', [HOSTILE]);
        expect(rows).toEqual([{ key: "'; DROP TABLE instance_settings; --", value: { note: "'; DROP TABLE instance_settings; --" } }]);
      });

      it('counts the rows a statement wrote or returned', async () => {
        const store = await openStore();
        const insert = await store.query("INSERT INTO instance_settings (key, value) VALUES ('a', '1'), ('b', '2')");
        expect(insert.rowCount).toBe(2);
        const select = await store.query('SELECT key FROM instance_settings ORDER BY key');
        expect(select).toEqual({ rows: [{ key: 'a' }, { key: 'b' }], rowCount: 2 });
        const update = await store.query("UPDATE instance_settings SET value = '3' WHERE key = 'missing'");
        expect(update.rowCount).toBe(0);
      });

      it('reads bigint columns as numbers', async () => {
        const store = await openStore();
        await store.query('INSERT INTO leader_epochs (name, epoch, node_id) VALUES ($1, $2, $3)', ['ingest', 41, 'node-a']);
        const { rows } = await store.query('SELECT epoch, epoch + 1 AS next, (SELECT count(*) FROM leader_epochs) AS n, ARRAY[epoch, 7] AS list FROM leader_epochs');
        expect(rows).toEqual([{ epoch: 41, next: 42, n: 1, list: [41, 7] }]);
      });

      it('binds a JS array as a PostgreSQL array', async () => {
        const store = await openStore();
        await store.query("INSERT INTO instance_settings (key, value) VALUES ('a', '1'), ('b', '2'), ('c,d', '3')");
        const { rows } = await store.query('SELECT key FROM instance_settings WHERE key = ANY($1::text[]) ORDER BY key', [['b', 'c,d', 'zz']]);
        expect(rows).toEqual([{ key: 'b' }, { key: 'c,d' }]);
      });

      it('round-trips jsonb and timestamptz', async () => {
        const store = await openStore();
        const at = new Date('2024-05-06T07:08:09.123Z');
        const value = { plan: 'pro', limits: { sites: 10, ratio: 0.5 }, tags: ['a', null, 'ü'], on: true };
        await store.query('INSERT INTO instance_settings (key, value, updated_at) VALUES ($1, $2, $3)', ['obj', value, at]);
        // A top-level JSON array goes as text: like pg, the store binds JS arrays as PostgreSQL arrays.
        await store.query('INSERT INTO instance_settings (key, value, updated_at) VALUES ($1, $2::jsonb, $3)', ['list', JSON.stringify([1, 'two']), at]);
        const { rows } = await store.query<{ key: string; value: unknown; updated_at: Date }>('SELECT key, value, updated_at FROM instance_settings ORDER BY key');
        expect(rows).toEqual([
          { key: 'list', value: [1, 'two'], updated_at: new Date('2024-05-06T07:08:09.123Z') },
          { key: 'obj', value: { plan: 'pro', limits: { sites: 10, ratio: 0.5 }, tags: ['a', null, 'ü'], on: true }, updated_at: new Date('2024-05-06T07:08:09.123Z') },
        ]);
        const defaulted = await store.query<{ recent: boolean }>("INSERT INTO leader_epochs (name, epoch, node_id) VALUES ('x', 1, 'n') RETURNING updated_at > now() - interval '1 minute' AS recent");
        expect(defaulted.rows).toEqual([{ recent: true }]);
      });

      it('rejects bad SQL with the database error', async () => {
        const store = await openStore();
        await expect(store.query('SELECT * FROM no_such_table')).rejects.toThrow('relation "no_such_table" does not exist');
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });

    describe('transaction', () => {
      it('commits everything the callback wrote and returns its result', async () => {
        const store = await openStore();
        const result = await store.transaction(async (tx) => {
          await tx.query("INSERT INTO instance_settings (key, value) VALUES ('a', '1')");
          await tx.query("INSERT INTO instance_settings (key, value) VALUES ('b', '2')");
          return 'done';
        });
        expect(result).toBe('done');
        const { rows } = await store.query('SELECT key FROM instance_settings ORDER BY key');
        expect(rows).toEqual([{ key: 'a' }, { key: 'b' }]);
      });

      it('rolls back when the callback throws, and rethrows the same error', async () => {
        const store = await openStore();
        const boom = new Error('boom');
        await expect(
          store.transaction(async (tx) => {
            await tx.query("INSERT INTO instance_settings (key, value) VALUES ('a', '1')");
            throw boom;
          }),
        ).rejects.toBe(boom);
        const { rows } = await store.query('SELECT key FROM instance_settings');
        expect(rows).toEqual([]);
      });

      it('does not commit when a statement failed, even if the callback swallowed the error', async () => {
        const store = await openStore();
        await expect(
          store.transaction(async (tx) => {
            await tx.query("INSERT INTO instance_settings (key, value) VALUES ('a', '1')");
            await tx.query('SELECT * FROM no_such_table').catch(() => undefined);
          }),
        ).rejects.toThrow();
        const { rows } = await store.query('SELECT key FROM instance_settings');
        expect(rows).toEqual([]);
      });

      it('keeps queries made outside it while it runs out of it', async () => {
        const store = await openStore();
        let outsideRead: Promise<{ rows: unknown[] }> | undefined;
        let outsideWrite: Promise<unknown> | undefined;
        await expect(
          store.transaction(async (tx) => {
            await tx.query("INSERT INTO instance_settings (key, value) VALUES ('inside', '1')");
            // Issued while the transaction is open; on PGlite they must queue behind it, on
            // PostgreSQL they run on another connection. Either way they are not part of it.
            outsideRead = store.query("SELECT key FROM instance_settings WHERE key = 'inside'");
            outsideWrite = store.query("INSERT INTO instance_settings (key, value) VALUES ('outside', '2')");
            await tx.query('SELECT pg_sleep(0.05)');
            await tx.query("INSERT INTO instance_settings (key, value) VALUES ('inside-late', '3')");
            throw new Error('roll it all back');
          }),
        ).rejects.toThrow('roll it all back');
        await expect(outsideRead).resolves.toMatchObject({ rows: [] });
        await outsideWrite;
        const { rows } = await store.query('SELECT key FROM instance_settings ORDER BY key');
        expect(rows).toEqual([{ key: 'outside' }]);
      });

      it('runs transactions started together one after the other, each whole', async () => {
        const store = await openStore();
        await store.query("INSERT INTO leader_epochs (name, epoch, node_id) VALUES ('counter', 0, 'n')");
        const bump = () =>
          store.transaction(async (tx) => {
            const { rows } = await tx.query<{ epoch: number }>("SELECT epoch FROM leader_epochs WHERE name = 'counter' FOR UPDATE");
            await tx.query("UPDATE leader_epochs SET epoch = $1 WHERE name = 'counter'", [rows[0].epoch + 1]);
          });
        await Promise.all([bump(), bump(), bump(), bump(), bump()]);
        const { rows } = await store.query("SELECT epoch FROM leader_epochs WHERE name = 'counter'");
        expect(rows).toEqual([{ epoch: 5 }]);
      });
    });

    describe('ping and close', () => {
      it('pings while open and refuses once closed', async () => {
        const store = await openStore();
        await expect(store.ping()).resolves.toBeUndefined();
        await store.close();
        await expect(store.ping()).rejects.toThrow('metadata store');
        await expect(store.query('SELECT 1')).rejects.toThrow('is closed');
      });

      it('closes more than once without error', async () => {
        const store = await openStore();
        await store.close();
        await expect(store.close()).resolves.toBeUndefined();
        await expect(Promise.all([store.close(), store.close()])).resolves.toEqual([undefined, undefined]);
      });
    });
  });
}
