// The archives plugin's leader jobs: backups on schedule (and on request), and retention. Both run
// on the leader only, with its fencing epoch: a deposed leader's bookkeeping is refused, and a
// backup it was writing never gets its manifest.
import { tmpdir } from 'node:os';
import type { LeaderJob, PluginHost } from '../../lib/plugins/api.ts';
import { formatBytes, pruneBackups, writeBackup } from './backup.ts';
import { newBackupId } from './manifest.ts';
import { applyRetention } from './retention.ts';
import type { ArchiveTarget } from './targets.ts';

export interface ArchivesSettings {
  target: string;
  interval_minutes: number;
  keep: number;
  retention_interval_minutes: number;
  staging_dir: string | undefined;
  include_secret: boolean;
}

/** How often the leader looks for a requested backup: "Back up now" starts within this. */
const REQUEST_POLL_MS = 2000;


/** Writes an entry in every team's audit log: a backup copies every team's data. */
async function auditEveryTeam(host: PluginHost<unknown>, teamIds: readonly string[], action: string, details: string): Promise<void> {
  for (const teamId of teamIds) await host.audit({ teamId, action, details });
}

async function teamsInBackup(host: PluginHost<unknown>): Promise<string[]> {
  const { rows } = await host.metadata.query<{ id: string }>('SELECT id FROM public.teams ORDER BY id');
  return rows.map((row) => row.id);
}

export function backupJob(host: PluginHost<ArchivesSettings>, target: () => ArchiveTarget): LeaderJob {
  let timer: NodeJS.Timeout | undefined;
  let abort: AbortController | undefined;
  let running: Promise<void> | undefined;
  let epoch = 0;

  const fenced = <T>(work: (tx: { query: PluginHost['metadata']['query'] }) => Promise<T>) => host.metadata.transaction(work, { fencedBy: epoch });

  /** The backup to run now: one asked for, else a scheduled one when the last began an interval ago (or there was none). */
  async function due(): Promise<{ id: string; requested: boolean } | null> {
    const { rows } = await host.metadata.query<{ id: string; status: string; due: boolean }>(
      `SELECT id, status, created_at <= now() - make_interval(mins => $1) AS due FROM backups ORDER BY created_at DESC LIMIT 1`,
      [host.settings.interval_minutes],
    );
    const last = rows[0];
    if (last?.status === 'requested') return { id: last.id, requested: true };
    if (!last || last.due) return { id: newBackupId(new Date()), requested: false };
    return null;
  }

  async function run(signal: AbortSignal): Promise<void> {
    const next = await due();
    if (!next || signal.aborted) return;
    const startedAt = new Date();
    const store = target();
    await fenced((tx) =>
      next.requested
        ? tx.query(`UPDATE backups SET status = 'running', started_at = $2, location = $3 WHERE id = $1 AND status = 'requested'`, [next.id, startedAt, store.location])
        : tx.query(`INSERT INTO backups (id, status, location, started_at) VALUES ($1, 'running', $2, $3)`, [next.id, store.location, startedAt]),
    );
    host.log.info({ backup: next.id, target: store.location }, 'backup started');
    try {
      const manifest = await writeBackup({
        id: next.id,
        startedAt,
        archive: host.archive!,
        target: store,
        stagingDir: host.settings.staging_dir ?? tmpdir(),
        signal,
        includeSecret: host.settings.include_secret,
        confirmLeadership: () => fenced(async () => undefined),
        progress: (done) =>
          void fenced((tx) => tx.query('UPDATE backups SET files = $2, bytes = $3, rows = $4 WHERE id = $1', [next.id, done.files, done.bytes, done.rows])).catch(() => undefined),
      });
      const { totals } = manifest;
      // The new backup is complete (its manifest is stored): only now may older ones and unfinished folders go.
      const removed = await pruneBackups(store, host.settings.keep, next.id).catch((err: unknown) => {
        host.log.warn({ err }, 'removing older backups failed; they are kept until the next backup');
        return [] as string[];
      });
      await fenced(async (tx) => {
        await tx.query(`UPDATE backups SET status = 'completed', finished_at = now(), files = $2, bytes = $3, rows = $4, error = NULL WHERE id = $1`, [
          next.id,
          totals.files,
          totals.bytes,
          totals.rows,
        ]);
        // A failed backup's row stays, as the record of the failure; its files are what went.
        if (removed.length > 0) await tx.query(`DELETE FROM backups WHERE id = ANY($1::text[]) AND status = 'completed'`, [removed]);
      });
      host.log.info({ backup: next.id, files: totals.files, bytes: totals.bytes, rows: totals.rows, removed }, 'backup completed');
      await host.emit('archives.backup.completed', { backup_id: next.id, location: store.location, files: totals.files, bytes: totals.bytes, rows: totals.rows, started_at: manifest.started_at, completed_at: manifest.completed_at });
      await auditEveryTeam(host, await teamsInBackup(host), 'backup_completed', `backed up the team's sites, settings and analytics to ${store.location} (backup ${next.id}, ${formatBytes(totals.bytes)} in all)`);
    } catch (err) {
      const error = signal.aborted ? 'interrupted: this node stopped leading or shut down' : (err as Error).message;
      host.log.error({ err, backup: next.id }, 'backup failed');
      // Whatever was stored is not a backup: no manifest, and the files go too.
      await pruneBackups(store, Number.MAX_SAFE_INTEGER).catch((cleanup: unknown) => host.log.warn({ err: cleanup }, 'removing an unfinished backup failed'));
      await fenced((tx) => tx.query(`UPDATE backups SET status = 'failed', finished_at = now(), error = $2 WHERE id = $1`, [next.id, error])).catch(() => undefined);
      if (!signal.aborted) {
        await host.emit('archives.backup.failed', { backup_id: next.id, location: store.location, error, started_at: startedAt.toISOString() }).catch(() => undefined);
        await auditEveryTeam(host, await teamsInBackup(host), 'backup_failed', `a backup to ${store.location} failed: ${error}`).catch(() => undefined);
      }
    }
  }

  function schedule(): void {
    timer = setTimeout(() => {
      const signal = abort!.signal;
      running = run(signal)
        .catch((err: unknown) => host.log.warn({ err }, 'backup scheduling failed'))
        .finally(() => {
          running = undefined;
          if (!signal.aborted) schedule();
        });
    }, REQUEST_POLL_MS);
    timer.unref();
  }

  return {
    async start(leaderEpoch) {
      epoch = leaderEpoch;
      abort = new AbortController();
      // A backup a previous leader was running died with it: it is not a backup, and its files go.
      await fenced((tx) => tx.query(`UPDATE backups SET status = 'failed', finished_at = now(), error = 'interrupted: the node running it stopped' WHERE status = 'running'`));
      schedule();
    },
    async stop() {
      clearTimeout(timer);
      abort?.abort();
      await running;
    },
  };
}

export function retentionJob(host: PluginHost<ArchivesSettings>, target: () => ArchiveTarget): LeaderJob {
  let timer: NodeJS.Timeout | undefined;
  let abort: AbortController | undefined;
  let running: Promise<void> | undefined;
  /** When the last run began (this leadership's); a site's retention changed since then runs it again at once. */
  let lastRun: Date | null = null;

  async function due(): Promise<boolean> {
    if (!lastRun || Date.now() - lastRun.getTime() >= host.settings.retention_interval_minutes * 60_000) return true;
    const { rows } = await host.metadata.query<{ changed: boolean }>('SELECT COALESCE(max(updated_at) > $1, false) AS changed FROM site_retention', [lastRun]);
    return rows[0].changed;
  }

  return {
    start(epoch) {
      abort = new AbortController();
      const signal = abort.signal;
      const tick = () => {
        running = (async () => {
          if (!(await due())) return;
          lastRun = new Date();
          const moved = await applyRetention(host, target(), { stagingDir: host.settings.staging_dir ?? tmpdir(), epoch, signal });
          if (moved.length > 0) host.log.info({ moved: moved.map(({ siteId, table, rows }) => ({ siteId, table, rows })) }, 'rows past their site’s retention archived and deleted');
        })()
          .catch((err: unknown) => {
            if (!signal.aborted) host.log.warn({ err }, 'retention run failed');
          })
          .finally(() => {
            running = undefined;
            if (!signal.aborted) {
              timer = setTimeout(tick, REQUEST_POLL_MS);
              timer.unref();
            }
          });
      };
      lastRun = null;
      timer = setTimeout(tick, REQUEST_POLL_MS);
      timer.unref();
    },
    async stop() {
      clearTimeout(timer);
      abort?.abort();
      await running;
    },
  };
}
