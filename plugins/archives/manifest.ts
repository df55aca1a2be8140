// A backup's manifest: what it holds, file by file, with rows, bytes and SHA-256. It is written
// last, so a backup whose manifest is missing was interrupted and is not a backup; a restore
// reads only what a manifest lists and checks every file against it.
import type { ArchivedAnalyticsTable, ArchivedMetadataTable } from '../../lib/plugins/api.ts';

export const MANIFEST_FORMAT = 1;
export const BACKUPS_PREFIX = 'backups/';

export interface StoredFile {
  /** Its key in the target, below the backup's folder (`metadata/public.users.ndjson`). */
  file: string;
  bytes: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT;
  id: string;
  plumb_version: string;
  started_at: string;
  completed_at: string;
  stores: { metadata: string; analytics: string };
  /** The migrations the metadata store recorded: a restore rebuilds the schema at exactly these. */
  migrations: { metadata: number[]; plugins: Record<string, number[]> };
  metadata: (Omit<ArchivedMetadataTable, 'file'> & StoredFile)[];
  analytics: { database: string; tables: (ArchivedAnalyticsTable & StoredFile)[] }[];
  /** The instance secret, when the backup holds it (include_secret): restores seal-readable secrets and valid sessions. */
  secret: StoredFile | null;
  totals: { files: number; bytes: number; rows: number };
}

/** `backups/<id>/` */
export const backupFolder = (id: string) => `${BACKUPS_PREFIX}${id}/`;
export const manifestKey = (id: string) => `${backupFolder(id)}manifest.json`;

/**
 * A backup id: its start in UTC to the millisecond and a random suffix, so ids sort by time (two
 * backups can start in the same second: the scheduled one and one asked for) and never collide.
 * Ids made before milliseconds were added (`…T03-00-00Z-…`) are still read.
 */
export function newBackupId(at: Date): string {
  const stamp = at.toISOString().replaceAll(':', '-');
  return `${stamp}-${crypto.randomUUID().slice(0, 8)}`;
}

export const BACKUP_ID = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(\.\d{3})?Z-[0-9a-f]{8}$/;

const isFile = (value: unknown): value is StoredFile => {
  const file = value as StoredFile;
  return typeof file?.file === 'string' && Number.isSafeInteger(file.bytes) && typeof file.sha256 === 'string' && /^[0-9a-f]{64}$/.test(file.sha256);
};

/** Reads a manifest, refusing one that is not a whole, well-formed manifest of this format. */
export function parseManifest(text: string, where: string): BackupManifest {
  let value: BackupManifest;
  try {
    value = JSON.parse(text) as BackupManifest;
  } catch {
    throw new Error(`${where} is not JSON`);
  }
  if (value?.format !== MANIFEST_FORMAT) throw new Error(`${where} has format ${JSON.stringify(value?.format)}; this Plumb reads format ${MANIFEST_FORMAT}`);
  const ok =
    typeof value.id === 'string' &&
    BACKUP_ID.test(value.id) &&
    typeof value.plumb_version === 'string' &&
    Array.isArray(value.migrations?.metadata) &&
    Array.isArray(value.metadata) &&
    value.metadata.every((table) => isFile(table) && typeof table.schema === 'string' && typeof table.table === 'string' && Number.isSafeInteger(table.rows)) &&
    (value.secret === null || isFile(value.secret)) &&
    Array.isArray(value.analytics) &&
    value.analytics.every(
      (db) => typeof db.database === 'string' && Array.isArray(db.tables) && db.tables.every((table) => isFile(table) && typeof table.name === 'string' && typeof table.ddl === 'string'),
    );
  if (!ok) throw new Error(`${where} is not a complete backup manifest`);
  return value;
}

/** Compares dotted versions numerically: negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const parts = (version: string) => version.split(/[.+-]/).slice(0, 3).map((part) => Number.parseInt(part, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
