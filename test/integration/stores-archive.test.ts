// Copying the metadata store out and back in (lib/stores/archive.ts) on PGlite: a dump loaded into a
// store rebuilt at the dump's migrations gives back every row of every table, Plumb's and a
// plugin's, in foreign-key order, with sequences that continue after the restored values.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { dumpMetadata, loadMetadata, metadataIsEmpty, metadataTables } from '../../lib/stores/archive.ts';
import { type MetadataStore, openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { createUser } from '../../lib/users/users.ts';
import { copyPgliteTemplate } from '../support/pglite-template.ts';

const NOTES = { name: 'notes', dir: fileURLToPath(new URL('../../plugins/examples/notes/migrations/', import.meta.url)), schema: 'plugin_notes' };

/** Every row of every table, as JSON text, sorted: two stores with equal snapshots hold the same data. */
async function snapshot(store: MetadataStore): Promise<Record<string, string[]>> {
  const tables: Record<string, string[]> = {};
  for (const { schema, table } of await metadataTables(store)) {
    if (table === 'schema_migrations' || table === 'plugin_migrations') continue;
    const { rows } = await store.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM "${schema}"."${table}" t`);
    tables[`${schema}.${table}`] = rows.map((r) => r.row).sort();
  }
  return tables;
}

describe('a metadata dump', () => {
  const root = mkdtempSync(join(tmpdir(), 'plumb-stores-archive-'));
  let source: MetadataStore;
  let restored: MetadataStore;
  let dump: Awaited<ReturnType<typeof dumpMetadata>>;

  beforeAll(async () => {
    for (const dataDir of ['a', 'b', 'c']) await copyPgliteTemplate(join(root, dataDir));
    source = await openMetadataStore({ dataDir: join(root, 'a'), log: silentLog });
    await source.migrate(NOTES);
    const team = await createTeam(source, { name: 'Dumped team' });
    const site = await createSite(source, { teamId: team.id, domain: 'dumped.example', hostnames: ['www.dumped.example'] });
    const user = await createUser(source, { email: 'ada@dumped.example', password: 'a long enough password', role: 'owner' });
    await source.query('INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3)', [team.id, user.id, 'owner']);
    await source.query("INSERT INTO plugin_notes.notes (id, site_id, text) VALUES (gen_random_uuid(), $1, 'a note with \"quotes\", a tab\tand ünïcode')", [site.id]);
    for (let i = 0; i < 1203; i++) {
      await source.query("INSERT INTO audit_log (id, team_id, action, details) VALUES (gen_random_uuid(), $1, 'test.action', $2)", [team.id, `entry ${i}`]);
    }
    const dir = join(root, 'dump');
    mkdirSync(dir);
    dump = await dumpMetadata(source, dir);
    restored = await openMetadataStore({ dataDir: join(root, 'b'), log: silentLog, migrate: false });
  }, 120_000);

  afterAll(async () => {
    await source?.close();
    await restored?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('records the migrations the store had, Plumb’s and each plugin’s', () => {
    expect(dump.migrations.core.length).toBeGreaterThan(10);
    expect(dump.migrations.plugins).toEqual({ notes: expect.arrayContaining([1]) });
    expect(dump.tables.find((t) => t.table === 'audit_log')?.rows).toBe(1203);
  });

  it('loads into a store rebuilt at those migrations with every row of every table, and sequences continue', async () => {
    expect(await metadataIsEmpty(restored)).toBe(true);
    await restored.migrate(undefined, { upTo: Math.max(...dump.migrations.core) });
    await restored.migrate(NOTES, { upTo: Math.max(...dump.migrations.plugins.notes) });
    await loadMetadata(restored, join(root, 'dump'), dump.tables);
    expect(await snapshot(restored)).toEqual(await snapshot(source));
    const team = (await restored.query<{ id: string }>('SELECT id FROM teams')).rows[0].id;
    const { rows } = await restored.query<{ seq: number; max: number }>(
      "WITH added AS (INSERT INTO audit_log (id, team_id, action, details) VALUES (gen_random_uuid(), $1, 'test.after', 'after') RETURNING seq) SELECT (SELECT seq FROM added) AS seq, (SELECT max(seq) FROM audit_log) AS max",
      [team],
    );
    expect(rows[0].seq).toBeGreaterThan(1203);
  });

  it('refuses a file whose rows differ from what its manifest says, loading nothing', async () => {
    const other = await openMetadataStore({ dataDir: join(root, 'c'), log: silentLog, migrate: false });
    try {
      await other.migrate(undefined, { upTo: Math.max(...dump.migrations.core) });
      const short = join(root, 'short');
      mkdirSync(short);
      for (const table of dump.tables) writeFileSync(join(short, table.file), '');
      await expect(loadMetadata(other, short, dump.tables.filter((t) => t.schema === 'public'))).rejects.toThrow(/holds 0 rows where its manifest says/);
      expect((await other.query<{ n: number }>('SELECT count(*)::int AS n FROM teams')).rows[0].n).toBe(0);
    } finally {
      await other.close();
    }
  });
});
