// The metadata store contract on a real PostgreSQL server, each store in a database of its own that
// is dropped afterwards; plus two nodes migrating one fresh database at the same moment.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { silentLog } from '../../lib/log.ts';
import { type MetadataStore, openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { metadataStoreContract } from '../support/metadata-contract.ts';
import { METADATA_MIGRATIONS } from '../support/migration-files.ts';
import { POSTGRES_URL, POSTGRES_URL_ENV } from '../support/services.ts';

const baseUrl = POSTGRES_URL;
const admin = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 5000 });
const databases: string[] = [];

// Unreachable PostgreSQL fails this file, in CI and locally alike: a skipped store contract would
// report green for a transport nobody tested.
beforeAll(async () => {
  try {
    await admin.connect();
    await admin.query('SELECT 1');
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`PostgreSQL is required for test/external and is unreachable at ${safeUrl(baseUrl)} (${reason}). Start it (.ci/run does) or set ${POSTGRES_URL_ENV}.`);
  }
});

afterAll(async () => {
  try {
    // Database names cannot be bound parameters; these are our own generated hex names.
    for (const name of databases.splice(0)) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
});

/** Creates an empty database for one test and returns its URL. */
async function freshDatabaseUrl(): Promise<string> {
  const name = `plumb_test_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  databases.push(name);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function safeUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '****';
  return u.toString();
}

metadataStoreContract('PostgreSQL', async () => openMetadataStore({ dataDir: '/nonexistent/not-used', databaseUrl: await freshDatabaseUrl(), log: silentLog }));

describe('openMetadataStore on PostgreSQL', () => {
  it('uses the server, not the data dir', async () => {
    const store = await openMetadataStore({ dataDir: '/nonexistent/not-used', databaseUrl: await freshDatabaseUrl(), log: silentLog });
    try {
      expect(store.kind).toBe('postgres');
      const { rows } = await store.query<{ embedded: boolean }>("SELECT version() NOT LIKE '%emscripten%' AS embedded");
      expect(rows).toEqual([{ embedded: true }]);
    } finally {
      await store.close();
    }
  });

  it('lets two nodes migrate one fresh database at once, recording each migration exactly once', async () => {
    const databaseUrl = await freshDatabaseUrl();
    const stores: MetadataStore[] = [];
    try {
      stores.push(await openMetadataStore({ dataDir: '/nonexistent/a', databaseUrl, log: silentLog, migrate: false }));
      stores.push(await openMetadataStore({ dataDir: '/nonexistent/b', databaseUrl, log: silentLog, migrate: false }));
      const results = await Promise.all(stores.map((s) => s.migrate()));
      // Whichever took the advisory lock first applied everything; the other waited and found it done.
      expect(results.map((r) => r.applied).sort((a, b) => b.length - a.length)).toEqual([METADATA_MIGRATIONS.map((m) => m.version), []]);
      const { rows } = await stores[0].query('SELECT version, count(*) AS times FROM schema_migrations GROUP BY version ORDER BY version');
      expect(rows).toEqual(METADATA_MIGRATIONS.map((m) => ({ version: m.version, times: 1 })));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('lets two nodes open one fresh database together, both migrating at start', async () => {
    const databaseUrl = await freshDatabaseUrl();
    const stores = await Promise.all([
      openMetadataStore({ dataDir: '/nonexistent/a', databaseUrl, log: silentLog }),
      openMetadataStore({ dataDir: '/nonexistent/b', databaseUrl, log: silentLog }),
    ]);
    try {
      const { rows } = await stores[1].query('SELECT version, name FROM schema_migrations');
      expect(rows).toEqual(METADATA_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('refuses a database written by a newer Plumb', async () => {
    const databaseUrl = await freshDatabaseUrl();
    const store = await openMetadataStore({ dataDir: '/nonexistent/not-used', databaseUrl, log: silentLog });
    await store.query("INSERT INTO schema_migrations (version, name) VALUES (9999, 'from_the_future')");
    await store.close();
    await expect(openMetadataStore({ dataDir: '/nonexistent/not-used', databaseUrl, log: silentLog })).rejects.toThrow('a newer Plumb wrote it');
  });

  it('fails to open with the server address, not the password, when PostgreSQL is unreachable', async () => {
    await expect(openMetadataStore({ dataDir: '/nonexistent/not-used', databaseUrl: 'postgres://plumb:sekrit@127.0.0.1:1/plumb', log: silentLog })).rejects.toThrow(
      /^metadata store: cannot reach PostgreSQL at 127\.0\.0\.1:1\/plumb: (?!.*sekrit)/,
    );
  });
});
