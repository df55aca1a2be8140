// Copying both stores out and back in, for backups and restores: the metadata store as a logical
// dump (one NDJSON file of `to_jsonb` rows per table, from one snapshot) and every team's
// analytics database as its tables' DDL plus one Parquet file per table, written by ClickHouse.
// A restore rebuilds the metadata schema at the backup's migration level, loads the rows, and
// re-creates each analytics table from its own DDL before inserting its file.
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AnalyticsStore } from './analytics/index.ts';
import { assertIdentifier, formatDateTime } from './analytics/transport.ts';
import { IMPORTED_TABLES, TENANT_TABLES, type TenantTable } from '../sites/transfer.ts';
import type { MetadataQueryable, MetadataStore } from './metadata/index.ts';

/** A metadata table in a backup: where its rows are, how many. */
export interface MetadataTableDump {
  schema: string;
  table: string;
  rows: number;
  /** The file's name inside the dump's directory. */
  file: string;
}

/** Which migrations the metadata store records: Plumb's own, and each plugin's. */
export interface MetadataMigrationLevels {
  core: number[];
  plugins: Record<string, number[]>;
}

/** Tables whose rows a restore does not copy: the migration runner writes them while it rebuilds the schema. */
const LEDGERS = new Set(['public.schema_migrations', 'public.plugin_migrations']);

const ROWS_PER_FETCH = 1000;
const ROWS_PER_INSERT = 500;

/** `"schema"."table"`, each part quoted as PostgreSQL quotes identifiers. */
const qualified = (schema: string, table: string) => `"${schema.replaceAll('"', '""')}"."${table.replaceAll('"', '""')}"`;

/**
 * Plumb's tables and its plugins' (schemas `public` and `plugin_*`), ordered so that a table comes
 * after every table its foreign keys point at: rows load in this order, and delete in reverse.
 */
export async function metadataTables(db: MetadataQueryable): Promise<{ schema: string; table: string }[]> {
  const { rows: tables } = await db.query<{ schema: string; table: string }>(
    `SELECT n.nspname AS schema, c.relname AS table
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND (n.nspname = 'public' OR n.nspname LIKE 'plugin\\_%')
      ORDER BY n.nspname, c.relname`,
  );
  const { rows: references } = await db.query<{ from_schema: string; from_table: string; to_schema: string; to_table: string }>(
    `SELECT fn.nspname AS from_schema, f.relname AS from_table, tn.nspname AS to_schema, t.relname AS to_table
       FROM pg_constraint k
       JOIN pg_class f ON f.oid = k.conrelid JOIN pg_namespace fn ON fn.oid = f.relnamespace
       JOIN pg_class t ON t.oid = k.confrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace
      WHERE k.contype = 'f'`,
  );
  const key = (schema: string, table: string) => `${schema}.${table}`;
  const needs = new Map(tables.map((t) => [key(t.schema, t.table), new Set<string>()]));
  for (const ref of references) {
    const from = key(ref.from_schema, ref.from_table);
    const to = key(ref.to_schema, ref.to_table);
    if (from !== to) needs.get(from)?.add(to);
  }
  const ordered: { schema: string; table: string }[] = [];
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const place = (table: { schema: string; table: string }) => {
    const name = key(table.schema, table.table);
    if (placed.has(name)) return;
    if (visiting.has(name)) throw new Error(`metadata tables reference each other in a cycle through ${name}; they cannot be ordered for a restore`);
    visiting.add(name);
    for (const dependency of needs.get(name) ?? []) {
      const [schema, ...rest] = dependency.split('.');
      place({ schema, table: rest.join('.') });
    }
    visiting.delete(name);
    placed.add(name);
    ordered.push(table);
  };
  for (const table of tables) place(table);
  return ordered;
}

async function migrationLevels(db: MetadataQueryable): Promise<MetadataMigrationLevels> {
  const core = await db.query<{ version: number }>('SELECT version FROM public.schema_migrations ORDER BY version');
  const plugins = await db.query<{ plugin: string; version: number }>('SELECT plugin, version FROM public.plugin_migrations ORDER BY plugin, version');
  const levels: MetadataMigrationLevels = { core: core.rows.map((row) => row.version), plugins: {} };
  for (const row of plugins.rows) {
    levels.plugins[row.plugin] ??= [];
    levels.plugins[row.plugin].push(row.version);
  }
  return levels;
}

/** Writes a line and waits when the file's buffer is full, so a big table never piles up in memory. */
async function writeLine(out: NodeJS.WritableStream, line: string): Promise<void> {
  if (!out.write(`${line}\n`)) await once(out, 'drain');
}

async function closeFile(out: ReturnType<typeof createWriteStream>): Promise<void> {
  out.end();
  await once(out, 'finish');
}

/**
 * Writes every metadata table as `<schema>.<table>.ndjson` in `dir`, each row its `to_jsonb`, all
 * read in one REPEATABLE READ transaction: the files are one moment of the database, with every
 * foreign key satisfied. Rows are read through a cursor, a thousand at a time.
 */
export async function dumpMetadata(store: MetadataStore, dir: string): Promise<{ tables: MetadataTableDump[]; migrations: MetadataMigrationLevels }> {
  return store.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const migrations = await migrationLevels(tx);
    const tables: MetadataTableDump[] = [];
    for (const { schema, table } of await metadataTables(tx)) {
      if (LEDGERS.has(`${schema}.${table}`)) continue;
      const file = `${schema}.${table}.ndjson`;
      const out = createWriteStream(join(dir, file), { mode: 0o600 });
      let rows = 0;
      try {
        await tx.query(`DECLARE metadata_dump NO SCROLL CURSOR FOR SELECT to_jsonb(t)::text AS row FROM ${qualified(schema, table)} t`);
        for (;;) {
          const batch = await tx.query<{ row: string }>(`FETCH ${ROWS_PER_FETCH} FROM metadata_dump`);
          for (const { row } of batch.rows) await writeLine(out, row);
          rows += batch.rows.length;
          if (batch.rows.length < ROWS_PER_FETCH) break;
        }
        await tx.query('CLOSE metadata_dump');
      } finally {
        await closeFile(out);
      }
      tables.push({ schema, table, rows, file });
    }
    return { tables, migrations };
  });
}

/** Columns a row may set: neither dropped nor generated. */
async function writableColumns(tx: MetadataQueryable, schema: string, table: string): Promise<string[]> {
  const { rows } = await tx.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_attribute a
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY a.attnum`,
    [qualified(schema, table)],
  );
  return rows.map((row) => `"${row.name.replaceAll('"', '""')}"`);
}

/**
 * Loads a dump into a metadata store whose schema is at the dump's migration level (the caller
 * migrates it there first), in one transaction: the rows migrations seeded are replaced by the
 * dump's, tables load in foreign-key order, and sequences continue after the highest value restored.
 */
export async function loadMetadata(store: MetadataStore, dir: string, dump: readonly MetadataTableDump[]): Promise<void> {
  await store.transaction(async (tx) => {
    const present = await metadataTables(tx);
    const dumped = new Set(dump.map((t) => `${t.schema}.${t.table}`));
    const missing = dump.find((t) => !present.some((p) => p.schema === t.schema && p.table === t.table));
    if (missing) throw new Error(`the backup holds table ${missing.schema}.${missing.table}, which the restored schema does not have`);
    for (const { schema, table } of [...present].reverse()) {
      if (dumped.has(`${schema}.${table}`)) await tx.query(`DELETE FROM ${qualified(schema, table)}`);
    }
    const byName = new Map(dump.map((t) => [`${t.schema}.${t.table}`, t]));
    for (const { schema, table } of present) {
      const entry = byName.get(`${schema}.${table}`);
      if (!entry) continue;
      const columns = (await writableColumns(tx, schema, table)).join(', ');
      const target = qualified(schema, table);
      const insert = (rows: string[]) =>
        tx.query(`INSERT INTO ${target} (${columns}) SELECT ${columns} FROM jsonb_populate_recordset(NULL::${target}, $1::jsonb)`, [`[${rows.join(',')}]`]);
      let batch: string[] = [];
      let loaded = 0;
      const lines = createInterface({ input: createReadStream(join(dir, entry.file), 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of lines) {
        if (line === '') continue;
        batch.push(line);
        if (batch.length === ROWS_PER_INSERT) {
          await insert(batch);
          loaded += batch.length;
          batch = [];
        }
      }
      if (batch.length > 0) await insert(batch);
      loaded += batch.length;
      if (loaded !== entry.rows) throw new Error(`table ${schema}.${table}: the backup's file holds ${loaded} rows where its manifest says ${entry.rows}`);
    }
    const { rows: sequences } = await tx.query<{ sequence: string; target: string; column_name: string }>(
      `SELECT pg_get_serial_sequence(format('%I.%I', c.table_schema, c.table_name), c.column_name) AS sequence,
              format('%I.%I', c.table_schema, c.table_name) AS target, c.column_name
         FROM information_schema.columns c
        WHERE (c.table_schema = 'public' OR c.table_schema LIKE 'plugin\\_%')
          AND pg_get_serial_sequence(format('%I.%I', c.table_schema, c.table_name), c.column_name) IS NOT NULL`,
    );
    for (const { sequence, target, column_name } of sequences) {
      const column = `"${column_name.replaceAll('"', '""')}"`;
      await tx.query(`SELECT setval($1::regclass, COALESCE((SELECT max(${column}) FROM ${target}), 0) + 1, false)`, [sequence]);
    }
  });
}

/** A table of a team's analytics database, as a backup keeps it. */
export interface AnalyticsTableInfo {
  name: string;
  /** Its CREATE TABLE statement, as the engine prints it. */
  ddl: string;
  rows: number;
}

/** Every team's analytics database (`tenant_…`) with its tables, in name order. */
export async function analyticsDatabases(store: AnalyticsStore): Promise<{ database: string; tables: AnalyticsTableInfo[] }[]> {
  const rows = await store.query<{ database: string; name: string; engine: string; ddl: string; rows: string }>(
    `SELECT database, name, engine, create_table_query AS ddl, toString(ifNull(total_rows, 0)) AS rows
       FROM system.tables WHERE database LIKE 'tenant\\\\_%' AND NOT is_temporary ORDER BY database, name`,
  );
  const databases = new Map<string, AnalyticsTableInfo[]>();
  for (const row of rows) {
    const tables = databases.get(row.database) ?? [];
    databases.set(row.database, tables);
    // Views hold no rows of their own and none exist in Plumb's schema; a backup copies tables.
    if (!row.engine.endsWith('MergeTree')) throw new Error(`analytics table ${row.database}.${row.name} has engine ${row.engine}; backups copy MergeTree tables only`);
    tables.push({ name: row.name, ddl: row.ddl, rows: Number(row.rows) });
  }
  return [...databases].map(([database, tables]) => ({ database, tables }));
}

/** Writes one analytics table, whole, as a Parquet file; returns the rows written. */
export async function exportAnalyticsTable(store: AnalyticsStore, database: string, table: string, filePath: string): Promise<void> {
  await store.exportParquet(`SELECT * FROM ${assertIdentifier('database', database)}.${assertIdentifier('table', table)}`, {}, filePath);
}

/** Whether any team's analytics database exists: a restore goes only into an empty store. */
export async function analyticsIsEmpty(store: AnalyticsStore): Promise<boolean> {
  const rows = await store.query<{ n: string }>(`SELECT toString(count()) AS n FROM system.databases WHERE name LIKE 'tenant\\\\_%'`);
  return Number(rows[0]?.n ?? 0) === 0;
}

/** Whether the metadata store holds no table of Plumb's or its plugins'. */
export async function metadataIsEmpty(db: MetadataQueryable): Promise<boolean> {
  return (await metadataTables(db)).length === 0;
}

/** Re-creates a table from its DDL (into an empty database) and loads its Parquet file. */
export async function restoreAnalyticsTable(store: AnalyticsStore, database: string, table: AnalyticsTableInfo, filePath: string): Promise<void> {
  await store.command('CREATE DATABASE IF NOT EXISTS {db:Identifier}', { db: assertIdentifier('database', database) });
  await store.command(table.ddl);
  await store.importParquet(table.name, filePath, { database });
}

/** The time column retention cuts each of a site's analytics tables by (a visit by its start, an imported day by its date). */
export const SITE_TABLE_TIMES: Readonly<Record<TenantTable, string>> = {
  hits: 'ts',
  events: 'ts',
  web_vitals: 'ts',
  ai_fetches: 'ts',
  visits: 'start',
  ...(Object.fromEntries(IMPORTED_TABLES.map((table) => [table, 'date'])) as Record<(typeof IMPORTED_TABLES)[number], 'date'>),
};

/** The rows of a site in one of its tables older than a moment: `{db}`, `{site}`, `{before}` are bound. */
function olderRows(table: TenantTable): string {
  return `FROM {db:Identifier}.${table} WHERE site_id = {site:UUID} AND ${SITE_TABLE_TIMES[table]} < {before:DateTime64(3)}`;
}

function siteTable(table: string): TenantTable {
  if (!(TENANT_TABLES as readonly string[]).includes(table)) throw new Error(`${table} is not one of a site's analytics tables (${TENANT_TABLES.join(', ')})`);
  return table as TenantTable;
}

export async function countOlderSiteRows(store: AnalyticsStore, db: string, siteId: string, table: string, before: Date): Promise<number> {
  const rows = await store.query<{ n: string }>(`SELECT toString(count()) AS n ${olderRows(siteTable(table))}`, { db, site: siteId, before });
  return Number(rows[0]?.n ?? 0);
}

export async function exportOlderSiteRows(store: AnalyticsStore, db: string, siteId: string, table: string, before: Date, filePath: string): Promise<void> {
  await store.exportParquet(`SELECT * ${olderRows(siteTable(table))} ORDER BY ${SITE_TABLE_TIMES[siteTable(table)]}`, { db, site: siteId, before: formatDateTime(before) }, filePath);
}

/** Lightweight DELETE, as a site's deletion uses: the rows are gone from reads when it returns. */
export async function deleteOlderSiteRows(store: AnalyticsStore, db: string, siteId: string, table: string, before: Date): Promise<void> {
  await store.command(`DELETE ${olderRows(siteTable(table))}`, { db, site: siteId, before });
}
