// `plumb restore --from <dir | s3://bucket/prefix> [--backup <id>]`: brings a backup back whole
// into empty stores — the data dir's embedded ones, or the PostgreSQL and ClickHouse the settings
// name. It refuses a target that holds anything, and a backup a newer Plumb wrote. Every file is
// checked against the manifest's SHA-256 before it is loaded, and every table's rows counted after.
// The metadata schema is rebuilt at exactly the backup's migrations, its rows loaded, and only then
// migrated to this Plumb's, so a backup of an older Plumb restores as an upgrade would run.
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { VERSION } from '../../lib/brand.ts';
import { type Config, loadConfig } from '../../lib/config.ts';
import { lockDataDir } from '../../lib/data-dir-lock.ts';
import { ConfigError } from '../../lib/errors.ts';
import { createLog, type Log } from '../../lib/log.ts';
import { pluginSchema } from '../../lib/plugins/host.ts';
import { type LoadedPlugin, loadPlugins } from '../../lib/plugins/loader.ts';
import { resolvePluginSettings } from '../../lib/plugins/settings.ts';
import { type AnalyticsStore, openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { analyticsIsEmpty, loadMetadata, metadataIsEmpty, restoreAnalyticsTable } from '../../lib/stores/archive.ts';
import { type MetadataStore, openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { loadMigrations, MIGRATIONS_DIR } from '../../lib/stores/metadata/migrate.ts';
import { FIRST_PARTY_PLUGINS } from '../index.ts';
import { readManifest } from './backup.ts';
import archives, { openTarget, type S3Settings } from './index.ts';
import { type BackupManifest, backupFolder, compareVersions } from './manifest.ts';
import type { ArchiveTarget } from './targets.ts';

export const RESTORE_USAGE = 'plumb restore --from <dir | s3://bucket/prefix> [--backup <id>] [settings flags]';

interface RestoreArgs {
  from: string;
  backup?: string;
  /** Everything else: Plumb's settings flags (-data-dir, -database-url …) and the archives plugin's. */
  rest: string[];
}

function parseRestoreArgs(argv: readonly string[]): RestoreArgs {
  let from: string | undefined;
  let backup: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const match = /^--?(from|backup)(?:=(.*))?$/.exec(argv[i]);
    if (!match) {
      rest.push(argv[i]);
      continue;
    }
    const value = match[2] ?? argv[++i];
    if (value === undefined || value === '') throw new ConfigError(`--${match[1]}`, 'needs a value');
    if (match[1] === 'from') from = value;
    else backup = value;
  }
  if (!from) throw new ConfigError('--from', `is required: ${RESTORE_USAGE}`);
  return { from, backup, rest };
}

/** Checks, before anything is written, that this Plumb can restore the backup whole. */
function assertRestorable(manifest: BackupManifest, knownCore: readonly number[], plugins: readonly LoadedPlugin[]): void {
  if (compareVersions(manifest.plumb_version, VERSION) > 0) {
    throw new Error(`backup ${manifest.id} was made by Plumb ${manifest.plumb_version}, newer than this Plumb (${VERSION}); restore it with that version or a later one`);
  }
  const unknown = manifest.migrations.metadata.filter((version) => !knownCore.includes(version));
  if (unknown.length > 0) throw new Error(`backup ${manifest.id} records metadata migrations this Plumb does not have (${unknown.join(', ')}); restore it with the Plumb that made it`);
  for (const plugin of Object.keys(manifest.migrations.plugins)) {
    const loaded = plugins.find(({ definition }) => definition.name === plugin);
    if (!loaded?.definition.metadataMigrations) {
      throw new Error(`backup ${manifest.id} holds the tables of the ${plugin} plugin: enable it (-plugins / PLUMB_PLUGINS) so that its schema can be rebuilt`);
    }
  }
}

async function fetchVerified(target: ArchiveTarget, manifest: BackupManifest, entry: { file: string; sha256: string; bytes: number }, filePath: string): Promise<void> {
  const got = await target.getFile(`${backupFolder(manifest.id)}${entry.file}`, filePath);
  if (got.sha256 !== entry.sha256 || got.bytes !== entry.bytes) {
    throw new Error(`backup ${manifest.id}: ${entry.file} does not match its manifest (SHA-256 or size differ); the backup is damaged`);
  }
}

async function restoreMetadata(store: MetadataStore, target: ArchiveTarget, manifest: BackupManifest, plugins: readonly LoadedPlugin[], staging: string): Promise<number> {
  const dir = join(staging, 'metadata');
  await mkdir(dir, { recursive: true });
  // The dump's file names, as the store wrote them, below the backup's metadata/ folder.
  const dump = manifest.metadata.map((table) => ({ schema: table.schema, table: table.table, rows: table.rows, file: basename(table.file) }));
  for (const [i, table] of manifest.metadata.entries()) await fetchVerified(target, manifest, table, join(dir, dump[i].file));
  await store.migrate(undefined, { upTo: Math.max(0, ...manifest.migrations.metadata) });
  for (const [name, versions] of Object.entries(manifest.migrations.plugins)) {
    const { definition } = plugins.find((plugin) => plugin.definition.name === name)!;
    await store.migrate({ name, dir: definition.metadataMigrations!, schema: pluginSchema(name) }, { upTo: Math.max(0, ...versions) });
  }
  await loadMetadata(store, dir, dump);
  // The dump was taken while this very backup ran: its row says so. Restored, it is the backup it became.
  if (manifest.migrations.plugins.archives) {
    const { totals } = manifest;
    await store.query(
      `UPDATE ${pluginSchema('archives')}.backups SET status = 'completed', finished_at = $2, files = $3, bytes = $4, rows = $5, error = NULL WHERE id = $1`,
      [manifest.id, manifest.completed_at, totals.files, totals.bytes, totals.rows],
    );
  }
  return manifest.metadata.reduce((sum, table) => sum + table.rows, 0);
}

async function restoreAnalytics(store: AnalyticsStore, target: ArchiveTarget, manifest: BackupManifest, staging: string, log: Log): Promise<number> {
  let rows = 0;
  for (const { database, tables } of manifest.analytics) {
    for (const table of tables) {
      const filePath = join(staging, `${database}.${table.name}.parquet`);
      await fetchVerified(target, manifest, table, filePath);
      await restoreAnalyticsTable(store, database, table, filePath);
      await rm(filePath, { force: true });
      const [counted] = await store.query<{ n: string }>('SELECT toString(count()) AS n FROM {db:Identifier}.{table:Identifier}', { db: database, table: table.name });
      if (Number(counted.n) !== table.rows) throw new Error(`${database}.${table.name}: ${counted.n} rows restored where the backup holds ${table.rows}`);
      log.debug({ database, table: table.name, rows: table.rows }, 'analytics table restored');
      rows += table.rows;
    }
  }
  return rows;
}

/**
 * The backup's instance secret, checked against the settings before anything is written: a
 * configured PLUMB_JWT_SECRET that differs would leave the restored authenticator seeds and webhook
 * secrets unreadable. Returns what to write where, and what the operator should know.
 */
async function settleSecret(target: ArchiveTarget, manifest: BackupManifest, config: Config, staging: string): Promise<{ write?: string; note?: string }> {
  if (!manifest.secret) {
    return config.jwtSecret === undefined
      ? { note: 'the backup holds no instance secret: unless PLUMB_JWT_SECRET is set to the original, people must set up their authenticator apps again and webhook secrets must be rotated' }
      : {};
  }
  const filePath = join(staging, 'instance-secret');
  await fetchVerified(target, manifest, manifest.secret, filePath);
  const secret = (await readFile(filePath, 'utf8')).trim();
  if (config.jwtSecret !== undefined) {
    if (config.jwtSecret !== secret) {
      throw new ConfigError(
        'PLUMB_JWT_SECRET',
        `differs from the instance secret in backup ${manifest.id}, which sealed its authenticator seeds and webhook secrets: unset it to restore the backup's secret into the data dir, or set it to the original`,
      );
    }
    return {};
  }
  return {
    write: secret,
    note: config.databaseUrl && config.clickhouseUrl ? `the backup's instance secret is in ${join(config.dataDir, 'jwt-secret')}: give it to every node as PLUMB_JWT_SECRET` : undefined,
  };
}

/** The data dir's folders a restore writes into: those of the embedded stores the settings use. */
function embeddedDirsInUse(config: Config): string[] {
  const used: string[] = [];
  if (!config.databaseUrl) used.push('meta');
  if (!config.clickhouseUrl) used.push('analytics');
  return used;
}

export interface RestoreReport {
  backup: string;
  metadataRows: number;
  analyticsRows: number;
  /** Something the operator must do or know. */
  note?: string;
}

/** Runs a restore as `plumb restore` does; throws with a message meant for the operator. */
export async function restore(argv: readonly string[], env: NodeJS.ProcessEnv, log: Log): Promise<RestoreReport> {
  const args = parseRestoreArgs(argv);
  const config = loadConfig({ argv: args.rest, env });
  const flags = new Map(config.pluginFlags);
  // The backup's location is --from; the archives plugin's other settings (S3 endpoint, keys) apply.
  const settings = resolvePluginSettings(archives, { ...env, PLUMB_ARCHIVES_TARGET: args.from }, flags) as unknown as S3Settings & { staging_dir?: string };
  const enabled = await loadPlugins(
    config.plugins.filter((name) => name !== 'archives'),
    { cwd: process.cwd(), firstParty: FIRST_PARTY_PLUGINS },
  );
  const plugins: LoadedPlugin[] = [{ definition: archives, specifier: 'archives' }, ...enabled];
  const target = openTarget(args.from, settings);
  const manifest = await readManifest(target, args.backup);
  const knownCore = (await loadMigrations(MIGRATIONS_DIR)).map((migration) => migration.version);
  assertRestorable(manifest, knownCore, plugins);

  const embedded = embeddedDirsInUse(config);
  const lock = embedded.length > 0 ? lockDataDir(config.dataDir) : undefined;
  const createdHere = embedded.filter((dir) => !existsSync(join(config.dataDir, dir)) || readdirSync(join(config.dataDir, dir)).length === 0);
  let metadata: MetadataStore | undefined;
  let analytics: AnalyticsStore | undefined;
  let wrote = false;
  const secretExisted = existsSync(join(config.dataDir, 'jwt-secret'));
  const staging = await mkdtemp(join(settings.staging_dir ?? tmpdir(), 'plumb-restore-'));
  try {
    metadata = await openMetadataStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, log, migrate: false });
    analytics = await openAnalyticsStore({ dataDir: config.dataDir, clickhouseUrl: config.clickhouseUrl, log });
    const where = (kind: string, url: string | undefined, dir: string) => (url ? `the ${kind} at ${new URL(url).host}` : `${join(config.dataDir, dir)}`);
    if (!(await metadataIsEmpty(metadata))) throw new Error(`${where('PostgreSQL database', config.databaseUrl, 'meta')} is not empty: a restore goes only into an empty store`);
    if (!(await analyticsIsEmpty(analytics))) throw new Error(`${where('ClickHouse server', config.clickhouseUrl, 'analytics')} already holds team databases: a restore goes only into an empty store`);
    const secret = await settleSecret(target, manifest, config, staging);
    wrote = true;
    if (secret.write !== undefined) {
      await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
      await writeFile(join(config.dataDir, 'jwt-secret'), secret.write, { mode: 0o600 });
      if (!secretExisted) createdHere.push('jwt-secret');
    }
    const metadataRows = await restoreMetadata(metadata, target, manifest, plugins, staging);
    const analyticsRows = await restoreAnalytics(analytics, target, manifest, staging, log);
    // Up to this Plumb's schema, as its first start would do.
    await metadata.migrate();
    for (const { definition } of plugins) {
      if (definition.metadataMigrations) await metadata.migrate({ name: definition.name, dir: definition.metadataMigrations, schema: pluginSchema(definition.name) });
    }
    return { backup: manifest.id, metadataRows, analyticsRows, note: secret.note };
  } catch (err) {
    if (wrote) {
      await metadata?.close().catch(() => undefined);
      await analytics?.close().catch(() => undefined);
      metadata = analytics = undefined;
      // What this restore created in the data dir goes; a server's database is the operator's to empty.
      for (const dir of createdHere) await rm(join(config.dataDir, dir), { recursive: true, force: true });
      const external = [config.databaseUrl && 'the PostgreSQL database', config.clickhouseUrl && 'the ClickHouse server'].filter(Boolean);
      if (external.length > 0) throw new Error(`${(err as Error).message}. The restore stopped partway: empty ${external.join(' and ')} before trying again`, { cause: err });
    }
    throw err;
  } finally {
    await metadata?.close();
    await analytics?.close();
    await rm(staging, { recursive: true, force: true });
    lock?.release();
  }
}

/** `plumb restore …`: 0 once restored, 1 when it failed, 2 for bad arguments. */
export async function restoreCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const log = createLog(env.PLUMB_LOG_LEVEL === 'debug' ? 'debug' : 'warn');
  try {
    const report = await restore(argv, env, log);
    process.stdout.write(`plumb: restored backup ${report.backup}: ${report.metadataRows} metadata rows, ${report.analyticsRows} analytics rows\n`);
    if (report.note) process.stdout.write(`plumb: note: ${report.note}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`plumb restore: ${(err as Error).message}\n`);
    return err instanceof ConfigError ? 2 : 1;
  }
}
