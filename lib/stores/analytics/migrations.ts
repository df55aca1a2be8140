// Tenant migrations: the numbered SQL files in ./migrations, applied to each tenant database in
// order and recorded in <tenant>.schema_migrations, so a start on an existing data dir only adds.
import { readdirSync, readFileSync } from 'node:fs';
import type { Log } from '../../log.ts';
import { orderMigrationFiles, refuseNewerSchema } from '../migration-files.ts';
import type { Params } from './transport.ts';

export interface Migration {
  version: number;
  /** The file name without `.sql`, e.g. `0001_tables`. */
  name: string;
  statements: string[];
}

/** What the runner needs from a store; the store's own methods, so nothing bypasses them. */
export interface MigrationTarget {
  query<T>(sql: string, params?: Params): Promise<T[]>;
  command(sql: string, params?: Params): Promise<void>;
  insert(table: string, rows: readonly Record<string, unknown>[], options?: { database?: string; dedupToken?: string }): Promise<void>;
}

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/**
 * Splits a file into statements: each ends with `;` at the end of a line (a `;` inside a line,
 * e.g. in a string literal, is left alone). Lines that are only comments are dropped.
 */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;[ \t]*(?:\r?\n|$)/)
    .map((part) =>
      part
        .split('\n')
        .filter((line) => !/^\s*--/.test(line))
        .join('\n')
        .trim(),
    )
    .filter((statement) => statement.length > 0);
}

/** The tenant migrations in version order; a misnamed file or a repeated version stops start-up, named. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return orderMigrationFiles('tenant', readdirSync(dir)).map(({ version, file }) => ({
    version,
    name: file.slice(0, -'.sql'.length),
    statements: splitStatements(readFileSync(new URL(file, dir), 'utf8')),
  }));
}

/**
 * Creates the tenant database and applies the migrations it has not recorded. The files bind the
 * database as `{db:Identifier}` (ClickHouse accepts identifier parameters in DDL), so no name is
 * spliced into SQL. Every statement is `IF NOT EXISTS`-safe, and the record is inserted with a
 * dedup token, so two nodes racing on the same tenant end with one record per version.
 * A tenant that records a version newer than the newest migration here is refused, untouched.
 * Returns the versions applied now.
 */
export async function migrateTenant(
  store: MigrationTarget,
  db: string,
  migrations: readonly Migration[],
  log: Log,
  /** Where the applied versions are recorded: Plumb's own in schema_migrations, a plugin's in its own table. */
  ledger: { table: string; what: string } = { table: 'schema_migrations', what: 'tenant database' },
): Promise<number[]> {
  await store.command('CREATE DATABASE IF NOT EXISTS {db:Identifier}', { db });
  await store.command(
    `CREATE TABLE IF NOT EXISTS {db:Identifier}.{ledger:Identifier}
     (version UInt32, name String, applied_at DateTime64(3, 'UTC'))
     ENGINE = MergeTree ORDER BY version
     SETTINGS non_replicated_deduplication_window = 100`,
    { db, ledger: ledger.table },
  );
  const rows = await store.query<{ version: number }>('SELECT DISTINCT version FROM {db:Identifier}.{ledger:Identifier}', { db, ledger: ledger.table });
  const done = new Set(rows.map((row) => Number(row.version)));
  refuseNewerSchema(`${ledger.what} ${db}`, done, migrations.at(-1)?.version ?? 0);
  const applied: number[] = [];
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    for (const statement of migration.statements) await store.command(statement, { db });
    await store.insert(ledger.table, [{ version: migration.version, name: migration.name, applied_at: new Date() }], {
      database: db,
      // Plumb's own records keep the token they always had; a plugin's carry its ledger's name.
      dedupToken: ledger.table === 'schema_migrations' ? `${db}:${migration.version}` : `${db}:${ledger.table}:${migration.version}`,
    });
    log.debug({ db, migration: migration.name }, 'tenant migration applied');
    applied.push(migration.version);
  }
  return applied;
}
