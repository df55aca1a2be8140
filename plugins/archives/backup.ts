// Making one backup, and the set of backups a target holds. A backup is a folder
// `backups/<id>/` with the metadata dump (NDJSON per table), each team's analytics tables
// (Parquet per table) and, written last, `manifest.json`. Files are staged on local disk one at a
// time, uploaded, and removed, so a backup needs free space for its largest table only.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet';
import type { PluginArchiveAccess } from '../../lib/plugins/api.ts';
import { type BackupManifest, BACKUPS_PREFIX, backupFolder, MANIFEST_FORMAT, manifestKey, parseManifest } from './manifest.ts';
import type { ArchiveTarget } from './targets.ts';

/** Bytes for people, as the admin page and the audit log write them: "8.1 KiB", "504.2 MiB". */
export const formatBytes = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : bytes < 1024 ** 3 ? `${(bytes / 1024 ** 2).toFixed(1)} MiB` : `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

/** The rows a Parquet file holds, read from its footer by a reader independent of the writer. */
export async function parquetRows(filePath: string): Promise<number> {
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(filePath));
  return Number(metadata.num_rows);
}

export interface BackupRun {
  id: string;
  startedAt: Date;
  archive: PluginArchiveAccess;
  target: ArchiveTarget;
  /** A folder for staging files (the system's temporary folder by default). */
  stagingDir: string;
  /** Aborted when the leader steps down or the node stops: the backup ends as failed. */
  signal: AbortSignal;
  /** Called before the manifest is written: throws when this node may no longer act as leader. */
  confirmLeadership(): Promise<void>;
  /** Whether the instance secret goes into the backup. */
  includeSecret: boolean;
  /** Progress for the admin page, after every file. */
  progress?(done: { files: number; bytes: number; rows: number }): Promise<void> | void;
}

/** Copies both stores into `backups/<id>/`, manifest last; returns the manifest. */
export async function writeBackup(run: BackupRun): Promise<BackupManifest> {
  const folder = backupFolder(run.id);
  const staging = await mkdtemp(join(run.stagingDir, 'plumb-backup-'));
  const totals = { files: 0, bytes: 0, rows: 0 };
  const stored = async (key: string, filePath: string, rows: number) => {
    run.signal.throwIfAborted();
    const { bytes, sha256 } = await run.target.putFile(`${folder}${key}`, filePath);
    await rm(filePath, { force: true });
    totals.files++;
    totals.bytes += bytes;
    totals.rows += rows;
    await run.progress?.({ ...totals });
    return { file: key, bytes, sha256 };
  };
  try {
    const dump = await run.archive.dumpMetadata(staging);
    const metadata: BackupManifest['metadata'] = [];
    for (const table of dump.tables) {
      metadata.push({ schema: table.schema, table: table.table, rows: table.rows, ...(await stored(`metadata/${table.file}`, join(staging, table.file), table.rows)) });
    }
    const analytics: BackupManifest['analytics'] = [];
    for (const { database, tables } of await run.archive.analyticsDatabases()) {
      const saved: BackupManifest['analytics'][number]['tables'] = [];
      for (const table of tables) {
        run.signal.throwIfAborted();
        const filePath = join(staging, `${database}.${table.name}.parquet`);
        await run.archive.exportTable(database, table.name, filePath);
        // Counted in the file itself: rows ingested during the backup make system.tables' figure stale.
        const rows = await parquetRows(filePath);
        saved.push({ name: table.name, ddl: table.ddl, rows, ...(await stored(`analytics/${database}/${table.name}.parquet`, filePath, rows)) });
      }
      analytics.push({ database, tables: saved });
    }
    let secret: BackupManifest['secret'] = null;
    if (run.includeSecret) {
      const filePath = join(staging, 'instance-secret');
      await writeFile(filePath, run.archive.instanceSecret(), { mode: 0o600 });
      secret = await stored('secret/instance-secret', filePath, 0);
    }
    await run.confirmLeadership();
    const manifest: BackupManifest = {
      format: MANIFEST_FORMAT,
      id: run.id,
      plumb_version: run.archive.plumbVersion,
      started_at: run.startedAt.toISOString(),
      completed_at: new Date().toISOString(),
      stores: run.archive.stores,
      migrations: { metadata: dump.migrations.core, plugins: dump.migrations.plugins },
      metadata,
      analytics,
      secret,
      totals,
    };
    run.signal.throwIfAborted();
    await run.target.putBytes(manifestKey(run.id), `${JSON.stringify(manifest, null, 1)}\n`);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** A backup folder in the target: complete when its manifest is there. */
export interface StoredBackup {
  id: string;
  complete: boolean;
  bytes: number;
  keys: string[];
}

/** Every backup folder in the target, oldest first. */
export async function storedBackups(target: ArchiveTarget): Promise<StoredBackup[]> {
  const folders = new Map<string, StoredBackup>();
  for (const object of await target.list(BACKUPS_PREFIX)) {
    const id = object.key.slice(BACKUPS_PREFIX.length).split('/')[0];
    const backup = folders.get(id) ?? { id, complete: false, bytes: 0, keys: [] };
    folders.set(id, backup);
    backup.keys.push(object.key);
    backup.bytes += object.size;
    if (object.key === manifestKey(id)) backup.complete = true;
  }
  return [...folders.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** A complete backup's manifest: the one named, or the newest. */
export async function readManifest(target: ArchiveTarget, id?: string): Promise<BackupManifest> {
  const complete = (await storedBackups(target)).filter((backup) => backup.complete);
  const chosen = id === undefined ? complete.at(-1) : complete.find((backup) => backup.id === id);
  if (!chosen) {
    const known = complete.map((backup) => backup.id).join(', ') || 'none';
    throw new Error(id === undefined ? `${target.location} holds no complete backup` : `${target.location} holds no complete backup ${id} (complete backups: ${known})`);
  }
  const body = await target.getBytes(manifestKey(chosen.id));
  if (!body) throw new Error(`${target.location}: the manifest of backup ${chosen.id} vanished while it was read`);
  return parseManifest(body.toString('utf8'), `${target.location}/${manifestKey(chosen.id)}`);
}

/**
 * Removes what should not stay: folders without a manifest (interrupted backups) other than the
 * one being written, and complete backups beyond the newest `keep`. Returns the ids removed.
 */
export async function pruneBackups(target: ArchiveTarget, keep: number, running?: string): Promise<string[]> {
  const backups = await storedBackups(target);
  const complete = backups.filter((backup) => backup.complete);
  const expired = new Set(complete.slice(0, Math.max(0, complete.length - keep)).map((backup) => backup.id));
  const removed: string[] = [];
  for (const backup of backups) {
    if (backup.id === running) continue;
    if (backup.complete && !expired.has(backup.id)) continue;
    await removeFolder(target, backup.id, backup.keys);
    removed.push(backup.id);
  }
  return removed;
}

/** Deletes one backup's objects, manifest first. */
export async function deleteBackup(target: ArchiveTarget, id: string): Promise<void> {
  await removeFolder(target, id, (await target.list(backupFolder(id))).map((object) => object.key));
}

/** The manifest goes first: a half-deleted backup must never look complete. */
async function removeFolder(target: ArchiveTarget, id: string, keys: readonly string[]): Promise<void> {
  const manifest = manifestKey(id);
  if (keys.includes(manifest)) await target.delete([manifest]);
  await target.delete(keys.filter((key) => key !== manifest));
}
