// The metadata store on embedded PGlite: the shared contract, plus what only a data dir can show
// (restart keeps data, a newer schema is refused) and the migrations runner's rules.
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { silentLog } from '../../lib/log.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { loadMigrations, MIGRATIONS_DIR, runMigrations } from '../../lib/stores/metadata/migrate.ts';
import { openPglite } from '../../lib/stores/metadata/pglite.ts';
import { metadataStoreContract, tempDataDir } from '../support/metadata-contract.ts';
import { LATEST_METADATA_VERSION, METADATA_MIGRATIONS } from '../support/migration-files.ts';
import { copyPgliteTemplate } from '../support/pglite-template.ts';

const removals: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(removals.splice(0).map((remove) => remove()));
});

/** An empty directory: a store opened on it makes its database, as a first start does. */
async function freshDir(): Promise<string> {
  const { dir, remove } = await tempDataDir();
  removals.push(remove);
  return dir;
}

/** A data dir holding a new, unmigrated database already, for tests about anything but its making. */
async function dirWithDatabase(): Promise<string> {
  const dir = await freshDir();
  await copyPgliteTemplate(dir);
  return dir;
}

metadataStoreContract('PGlite', async () => openMetadataStore({ dataDir: await dirWithDatabase(), log: silentLog }));

describe('openMetadataStore on PGlite', () => {
  it('keeps its files in <dataDir>/meta, creating the directories', async () => {
    const dataDir = join(await freshDir(), 'not', 'yet');
    const store = await openMetadataStore({ dataDir, log: silentLog });
    await store.close();
    expect(store.kind).toBe('pglite');
    expect(existsSync(join(dataDir, 'meta', 'PG_VERSION'))).toBe(true);
  });

  it('makes a new database whole beside the data dir and moves it into place, with small shared buffers', async () => {
    const dataDir = await freshDir();
    const store = await openMetadataStore({ dataDir, log: silentLog });
    try {
      expect(readdirSync(dataDir).filter((name) => name.startsWith('meta'))).toEqual(['meta']);
      expect((await store.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows).toEqual([{ shared_buffers: '2MB' }]);
    } finally {
      await store.close();
    }
  });

  it('refuses to make a database over a meta directory that holds something else', async () => {
    const dataDir = await freshDir();
    await mkdir(join(dataDir, 'meta'), { recursive: true });
    await writeFile(join(dataDir, 'meta', 'notes.txt'), 'not a database');
    await expect(openMetadataStore({ dataDir, log: silentLog })).rejects.toThrow(/cannot open PGlite/);
    expect(readdirSync(join(dataDir, 'meta'))).toContain('notes.txt');
  });

  it('keeps rows across close and reopen, without applying migrations again', async () => {
    const dataDir = await dirWithDatabase();
    const first = await openMetadataStore({ dataDir, log: silentLog });
    await first.query('INSERT INTO instance_settings (key, value) VALUES ($1, $2)', ['site_limit', { max: 50 }]);
    await first.transaction((tx) => tx.query("INSERT INTO leader_epochs (name, epoch, node_id) VALUES ('jobs', 3, 'node-a')"));
    const before = await first.query<{ version: number; applied_at: Date }>('SELECT version, applied_at FROM schema_migrations');
    await first.close();

    const second = await openMetadataStore({ dataDir, log: silentLog });
    try {
      expect((await second.query('SELECT key, value FROM instance_settings')).rows).toEqual([{ key: 'site_limit', value: { max: 50 } }]);
      expect((await second.query('SELECT name, epoch, node_id FROM leader_epochs')).rows).toEqual([{ name: 'jobs', epoch: 3, node_id: 'node-a' }]);
      expect((await second.query('SELECT version, applied_at FROM schema_migrations')).rows).toEqual(before.rows);
      await expect(second.migrate()).resolves.toEqual({ applied: [] });
    } finally {
      await second.close();
    }
  });

  it('refuses a database written by a newer Plumb and leaves it untouched', async () => {
    const dataDir = await dirWithDatabase();
    const store = await openMetadataStore({ dataDir, log: silentLog });
    await store.query("INSERT INTO schema_migrations (version, name) VALUES (9999, 'from_the_future')");
    await store.query("INSERT INTO instance_settings (key, value) VALUES ('kept', 'true')");
    await store.close();

    await expect(openMetadataStore({ dataDir, log: silentLog })).rejects.toThrow(
      `metadata database is at schema version 9999 but this Plumb only knows migrations up to ${LATEST_METADATA_VERSION}: a newer Plumb wrote it`,
    );

    const unmigrated = await openMetadataStore({ dataDir, log: silentLog, migrate: false });
    try {
      expect((await unmigrated.query('SELECT key FROM instance_settings')).rows).toEqual([{ key: 'kept' }]);
      expect((await unmigrated.query('SELECT version FROM schema_migrations ORDER BY version')).rows).toEqual([...METADATA_MIGRATIONS.map((m) => ({ version: m.version })), { version: 9999 }]);
    } finally {
      await unmigrated.close();
    }
  });

  it('leaves an unmigrated database alone when migrate is false', async () => {
    const store = await openMetadataStore({ dataDir: await dirWithDatabase(), log: silentLog, migrate: false });
    try {
      const { rows } = await store.query("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'");
      expect(rows).toEqual([{ n: 0 }]);
      await expect(store.migrate()).resolves.toEqual({ applied: METADATA_MIGRATIONS.map((m) => m.version) });
    } finally {
      await store.close();
    }
  });
});

describe('metadata migrations', () => {
  async function migrationsDir(files: Record<string, string>): Promise<string> {
    const dir = await freshDir();
    for (const [name, sql] of Object.entries(files)) await writeFile(join(dir, name), sql);
    return dir;
  }

  it('ships numbered files, read in numeric order', async () => {
    const shipped = await loadMigrations(MIGRATIONS_DIR);
    expect(shipped.map((m) => [m.version, m.name, m.file])).toEqual(METADATA_MIGRATIONS.map((m) => [m.version, m.name, m.file]));
    expect(shipped[0].file).toBe('0001_instance.sql');
  });

  it('orders by number, not by file name', async () => {
    const dir = await migrationsDir({ '10000_later.sql': 'SELECT 1;', '0002_second.sql': 'SELECT 1;', '0001_first.sql': 'SELECT 1;', 'README.md': 'ignored' });
    expect((await loadMigrations(dir)).map((m) => m.version)).toEqual([1, 2, 10000]);
  });

  it('refuses two files with the same version', async () => {
    const dir = await migrationsDir({ '0001_users.sql': 'SELECT 1;', '0001_teams.sql': 'SELECT 1;' });
    await expect(loadMigrations(dir)).rejects.toThrow(/share version 0001: each version must be unique/);
  });

  it('refuses a misnamed file and a file that manages its own transaction', async () => {
    await expect(loadMigrations(await migrationsDir({ '1-users.sql': 'SELECT 1;' }))).rejects.toThrow('1-users.sql: name must look like 0001_snake_case_name.sql');
    await expect(loadMigrations(await migrationsDir({ '0001_users.sql': 'BEGIN;\nSELECT 1;\nCOMMIT;' }))).rejects.toThrow('must not contain BEGIN/COMMIT/ROLLBACK');
  });

  it('applies each file in its own transaction: a failing one leaves no trace and stops the run', async () => {
    const dir = await migrationsDir({
      '0001_ok.sql': 'CREATE TABLE ok_one (id int);',
      '0002_broken.sql': 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;',
      '0003_never.sql': 'CREATE TABLE never (id int);',
    });
    const transport = await openPglite({ dataDir: await dirWithDatabase(), log: silentLog });
    try {
      await expect(transport.withConnection((s) => runMigrations(s, { dir, log: silentLog }))).rejects.toThrow('relation "no_such_table" does not exist');
      const tables = await transport.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
      expect(tables.rows.map((r) => r.table_name)).toEqual(['ok_one', 'schema_migrations']);
      expect((await transport.query('SELECT version, name FROM schema_migrations')).rows).toEqual([{ version: 1, name: 'ok' }]);
      // The lock was released: a fixed release migrates on the same connection.
      await writeFile(join(dir, '0002_broken.sql'), 'CREATE TABLE fixed (id int);');
      await expect(transport.withConnection((s) => runMigrations(s, { dir, log: silentLog }))).resolves.toEqual({ applied: [2, 3] });
    } finally {
      await transport.close();
    }
  });
});
