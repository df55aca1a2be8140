// The rules both migration runners (metadata: lib/stores/metadata/migrate.ts; analytics tenants:
// lib/stores/analytics/migrations.ts) follow, in one place: which files are migrations, their
// order, and refusing a database whose schema is newer than this Plumb knows.

export interface MigrationFile {
  version: number;
  /** The file name without the number and `.sql`, e.g. `tables` for `0001_tables.sql`. */
  name: string;
  file: string;
}

const FILE_NAME = /^(\d{4,})_([a-z0-9_]+)\.sql$/;

/**
 * The `.sql` files of a migrations folder in version order. A misnamed `.sql` file or two files
 * with one version stop start-up, named: skipping one silently would run a schema the code does
 * not expect. `store` names the runner in messages ("metadata", "tenant").
 */
export function orderMigrationFiles(store: string, files: readonly string[]): MigrationFile[] {
  const byVersion = new Map<number, string>();
  const ordered: MigrationFile[] = [];
  for (const file of files.filter((f) => f.endsWith('.sql'))) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new Error(`${store} migration ${file}: name must look like 0001_snake_case_name.sql`);
    const version = Number(match[1]);
    const clash = byVersion.get(version);
    if (clash) throw new Error(`${store} migrations ${clash} and ${file} share version ${match[1]}: each version must be unique`);
    byVersion.set(version, file);
    ordered.push({ version, name: match[2], file });
  }
  return ordered.sort((a, b) => a.version - b.version);
}

/**
 * Refuses a database that records a migration newer than the newest this Plumb ships: a newer
 * Plumb wrote it, and running on would misread or damage its data. `database` names it in the
 * message ("metadata database", "tenant database tenant_…").
 */
export function refuseNewerSchema(database: string, recordedVersions: Iterable<number>, latestKnown: number): void {
  const latestRecorded = Math.max(0, ...recordedVersions);
  if (latestRecorded <= latestKnown) return;
  throw new Error(
    `${database} is at schema version ${latestRecorded} but this Plumb only knows migrations up to ${latestKnown}: ` +
      'a newer Plumb wrote it. Refusing to start so that no data is lost; run that newer Plumb (or restore a backup made for this version).',
  );
}
