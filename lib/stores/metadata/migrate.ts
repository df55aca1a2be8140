// Metadata migrations: numbered SQL files applied in order at start, each in its own transaction
// with its schema_migrations row, under an advisory lock so nodes starting together do not race.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Log } from '../../log.ts';
import { orderMigrationFiles, refuseNewerSchema } from '../migration-files.ts';
import type { MetadataConnection } from './index.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * The advisory lock every Plumb node takes while migrating the metadata database. Fixed forever:
 * two versions of Plumb must contend on the same key. Passed as text because it does not fit in a
 * JS number exactly.
 */
export const MIGRATION_LOCK_KEY = '5794220148316040193';

export interface Migration {
  version: number;
  name: string;
  file: string;
  sql: string;
}

// The runner owns the transaction; a script that commits on its own would break the
// "migration and its record land together" guarantee.
const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|START\s+TRANSACTION|END)\b/im;

/** Reads `NNNN_name.sql` files from dir in numeric order; refuses misnamed files and duplicate versions. */
export async function loadMigrations(dir: string, what = 'metadata'): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const { version, name, file } of orderMigrationFiles(what, await readdir(dir))) {
    const sql = await readFile(join(dir, file), 'utf8');
    if (TRANSACTION_CONTROL.test(sql)) throw new Error(`${what} migration ${file}: must not contain BEGIN/COMMIT/ROLLBACK; the runner wraps each file in a transaction`);
    migrations.push({ version, name, file, sql });
  }
  return migrations;
}

export interface RunMigrationsOptions {
  dir: string;
  log: Log;
  /**
   * A plugin's migrations: run with the plugin's schema first on the search path (created when
   * missing), recorded apart from Plumb's own (in plugin_migrations, by plugin name).
   */
  plugin?: { name: string; schema: string };
  /** Stop after this version: a restore rebuilds the schema a backup was taken at before loading its rows. */
  upTo?: number;
}

/**
 * Applies the migrations in dir that the database has not recorded. The connection is held
 * for the whole run, so the PostgreSQL session-level advisory lock taken on it covers every step;
 * a second node blocks on the lock, then finds everything recorded and applies nothing.
 */
export async function runMigrations(connection: MetadataConnection, options: RunMigrationsOptions): Promise<{ applied: number[] }> {
  const { log, plugin } = options;
  const what = plugin ? `plugin ${plugin.name}` : 'metadata';
  // Read the files before touching the database: a broken release fails without taking the lock.
  const migrations = await loadMigrations(options.dir, what);
  await connection.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
  try {
    await connection.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    // Plugins' migrations are recorded by plugin; Plumb's own migrations create that ledger.
    if (plugin) await connection.exec(`CREATE SCHEMA IF NOT EXISTS ${plugin.schema}`);
    const recorded = plugin
      ? await connection.query<{ version: number }>('SELECT version FROM public.plugin_migrations WHERE plugin = $1 ORDER BY version', [plugin.name])
      : await connection.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    const done = new Set(recorded.rows.map((r) => r.version));
    refuseNewerSchema(plugin ? `the ${plugin.name} plugin's tables` : 'metadata database', done, migrations.at(-1)?.version ?? 0);

    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      if (options.upTo !== undefined && m.version > options.upTo) break;
      const started = performance.now();
      await connection.transaction(async (tx) => {
        // The schema name comes from the plugin's checked name, never from user text.
        if (plugin) await tx.exec(`SET LOCAL search_path TO ${plugin.schema}`);
        await tx.exec(m.sql);
        if (plugin) await tx.query('INSERT INTO public.plugin_migrations (plugin, version, name) VALUES ($1, $2, $3)', [plugin.name, m.version, m.name]);
        else await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      });
      applied.push(m.version);
      log.debug({ version: m.version, name: m.name, ms: Math.round(performance.now() - started) }, `${what} migration applied`);
    }
    // A new data dir is created whole (no news); an existing one being upgraded is worth a line.
    if (applied.length > 0 && done.size > 0) log.info({ applied }, `${what} schema upgraded: ${applied.length} migration(s) applied`);
    return { applied };
  } finally {
    // Failing to unlock must not hide the error that brought us here; the lock also ends with the
    // connection, which the transport drops when its work fails.
    await connection.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]).catch((err: unknown) => {
      log.warn({ err }, 'metadata migrations: advisory unlock failed');
    });
  }
}
