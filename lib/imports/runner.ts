// The leader job `imports.runner` (the imports service plugs it in): takes imports asked to
// validate or run, one at a time, as soon as the request's `imports.queued` event wakes it; writes
// their staged files to a temporary folder on this node and calls the source's validate (the dry
// run) or run, with progress written back about once a second. Every change of state is fenced by
// the leader's epoch. A run that fails has every row it wrote removed, so nothing of it is kept;
// a run found `running` under an older epoch (its leader died) is cleaned the same way and run
// again from the start, up to MAX_ATTEMPTS times, after which it fails. Completion and failure are
// announced as webhook events and written to the team audit log. Staged bytes go once an import
// completes or fails, and those of imports left unfinished for a week are swept.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { FencedError } from '../../cluster/fencing.ts';
import type { LeaderJob } from '../../cluster/leader-jobs.ts';
import { writeAudit } from '../audit/audit.ts';
import type { Runtime } from '../runtime.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import { stagedChunks } from './imports.ts';
import { ImportInputError, type ImportManifest, type ImportSite, type StagedFile } from './source.ts';
import { importSource } from './sources/index.ts';
import { importActor, importSetup, removeImportSetup } from './setup.ts';
import { deleteImportRows } from './tables.ts';

/**
 * How often the leader looks for work nobody told it of: an import asked for while the wake could
 * not reach it (the transporter was down), or left claimed by a leader that died. Otherwise it
 * looks when woken: asking for a dry run or a run wakes it on whichever node leads.
 */
const RECHECK_MS = 10_000;
/** After a round that failed (the metadata store unreachable), the next comes this soon. */
const RETRY_MS = 1000;
/** Progress is written back at most this often; the record's presence is checked as often. */
const PROGRESS_MS = 1000;
/** Runs interrupted by their leader's death before the import is failed rather than started again. */
export const MAX_ATTEMPTS = 3;
/** Staged bytes of an import not finished after this long are deleted, and the import failed. */
export const STAGED_DAYS = 7;
const SWEEP_MS = 60 * 60 * 1000;
/** An import waiting for a step (its validation or its run) that the epoch `$1` has not claimed. */
const WAITING_FOR_EPOCH = `state IN ('validating', 'running') AND (claimed_epoch IS NULL OR claimed_epoch < $1)`;

interface Claimed {
  id: string;
  site_id: string;
  source: string;
  state: 'validating' | 'running';
  created_by: string;
  attempts: number;
  /** Claimed before by an older epoch: that leader stopped in the middle of this step. */
  interrupted: boolean;
  manifest: ImportManifest | null;
}

interface SiteRow {
  id: string;
  team_id: string;
  domain: string;
  timezone: string;
}

/** Why the step stopped without an outcome of its own: leadership ended, or the import was deleted. */
class Stopped extends Error {
  readonly deleted: boolean;
  constructor(deleted: boolean) {
    super(deleted ? 'the import was deleted' : 'this node stopped leading');
    this.deleted = deleted;
  }
}

/** The leader's imports runner: a leader job that can be told there is work. */
export interface ImportsRunner extends LeaderJob {
  /** An import was asked to validate or run: look now, not at the next check. Does nothing unless leading. */
  wake(): void;
}

export function importsRunnerJob(runtime: Runtime): ImportsRunner {
  const { log } = runtime;
  let epoch = 0;
  let abort: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  /** Woken while a round ran: what woke it may have come after that round's last look. */
  let wokenMidRound = false;
  let lastSweep = 0;
  let claimsReset = false;

  const fenced = <T>(work: (tx: MetadataQueryable) => Promise<T>) => runtime.fence.run(epoch, work);

  /**
   * Whether an import waits for a step this epoch has not claimed: one read and no transaction, so
   * the check an idle leader makes every few seconds costs a single statement (on a single node the
   * metadata store runs on the main thread, where the requests arriving meanwhile wait behind it).
   */
  async function anyWaiting(): Promise<boolean> {
    const { rows } = await runtime.metadata().query<{ waiting: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM imports WHERE ${WAITING_FOR_EPOCH}) AS waiting`,
      [epoch],
    );
    return rows[0]?.waiting === true;
  }

  /** The oldest import waiting for a step that this epoch has not claimed, claimed now. */
  async function claim(): Promise<Claimed | null> {
    return fenced(async (tx) => {
      const { rows } = await tx.query<Omit<Claimed, 'interrupted'> & { claimed_epoch: number | null }>(
        `SELECT id, site_id, source, state, created_by, attempts, manifest, claimed_epoch FROM imports
          WHERE ${WAITING_FOR_EPOCH}
          ORDER BY updated_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [epoch],
      );
      const found = rows[0];
      if (!found) return null;
      const interrupted = found.claimed_epoch !== null;
      const attempts = found.state === 'running' && interrupted ? found.attempts + 1 : found.attempts;
      await tx.query('UPDATE imports SET claimed_epoch = $2, attempts = $3, updated_at = now() WHERE id = $1', [found.id, epoch, attempts]);
      return { id: found.id, site_id: found.site_id, source: found.source, state: found.state, created_by: found.created_by, attempts, interrupted, manifest: found.manifest };
    });
  }

  async function siteOf(siteId: string): Promise<SiteRow | null> {
    const { rows } = await runtime.metadata().query<SiteRow>('SELECT id, team_id, domain, timezone FROM sites WHERE id = $1 AND deleted_at IS NULL', [siteId]);
    return rows[0] ?? null;
  }

  /** Writes the import's staged files into a folder of this node. */
  async function materialise(importId: string, dir: string): Promise<StagedFile[]> {
    const { rows } = await runtime.metadata().query<{ index: number; name: string; size: number }>('SELECT index, name, size FROM import_files WHERE import_id = $1 ORDER BY index', [importId]);
    const files: StagedFile[] = [];
    for (const file of rows) {
      const path = join(dir, `${file.index}`);
      await pipeline(Readable.from(stagedChunks(runtime.metadata(), importId, file.index)), createWriteStream(path, { mode: 0o600 }));
      files.push({ name: file.name, path, size: Number(file.size) });
    }
    return files;
  }

  /** Ends a step: the new state and what goes with it, only if this epoch still holds the import. */
  async function settle(job: Claimed, set: string, params: unknown[], after?: (tx: MetadataQueryable) => Promise<void>): Promise<boolean> {
    return fenced(async (tx) => {
      const { rowCount } = await tx.query(`UPDATE imports SET ${set}, claimed_epoch = NULL, updated_at = now() WHERE id = $1 AND claimed_epoch = $2`, [job.id, epoch, ...params]);
      if (rowCount === 0) return false;
      await after?.(tx);
      return true;
    });
  }

  const dropStaged = (tx: MetadataQueryable, importId: string) => tx.query('DELETE FROM import_chunks WHERE import_id = $1', [importId]);

  async function fail(job: Claimed, site: SiteRow | null, error: { message: string; file: string | null; line: number | null }): Promise<void> {
    const settled = await settle(job, "state = 'failed', error = $3, progress = NULL", [JSON.stringify(error)], async (tx) => {
      await dropStaged(tx, job.id);
      if (!site) return;
      await queueOperationalEvent(tx, 'import.failed', { site_id: site.id, import_id: job.id, source: job.source, error: error.message });
      await writeAudit(tx, { teamId: site.team_id, action: 'import.failed', site: { id: site.id, domain: site.domain }, details: `the ${job.source} ${job.state === 'running' ? 'import' : 'validation'} failed: ${error.message}` });
    });
    if (settled) log.warn({ import: job.id, error: error.message }, 'import failed');
  }

  /** Validates or runs one claimed import to its end (or until leadership ends or it is deleted). */
  async function step(job: Claimed, signal: AbortSignal): Promise<void> {
    const site = await siteOf(job.site_id);
    const source = importSource(job.source);
    if (!site || !source) {
      await fail(job, site, { message: site ? `the ${job.source} source is not available on this instance` : 'the site was deleted', file: null, line: null });
      return;
    }
    const store = runtime.analytics();
    const tenant = await store.ensureTenant(site.team_id);
    const actor = await importActor(runtime.metadata(), job.created_by);
    /** Everything a run added: its rows, and the goals and funnels it created. */
    const undoRun = async () => {
      await deleteImportRows(store, tenant, site.id, job.id);
      await removeImportSetup(runtime.metadata(), actor, site.id, job.id);
    };
    if (job.state === 'running' && job.interrupted) {
      // Whatever the interrupted run wrote goes before it starts again (or fails for good).
      await undoRun();
      if (job.attempts >= MAX_ATTEMPTS) {
        await fail(job, site, { message: `the node running the import stopped ${job.attempts} times; nothing of it was kept`, file: null, line: null });
        return;
      }
      log.info({ import: job.id, attempt: job.attempts + 1 }, 'import: running again after its leader stopped');
    }
    // Stops the step when the import is deleted: its record is checked as often as progress is written.
    const stop = new AbortController();
    const onLeaderStop = () => stop.abort(new Stopped(false));
    signal.addEventListener('abort', onLeaderStop, { once: true });
    let rowsRead = 0;
    let rowsTotal: number | null = job.manifest?.rows_scanned ?? null;
    let written = -1;
    const heartbeat = setInterval(() => {
      const progress = job.state === 'running' && rowsRead !== written ? JSON.stringify({ rows_read: rowsRead, rows_total: rowsTotal }) : null;
      written = rowsRead;
      void fenced((tx) =>
        progress
          ? tx.query('UPDATE imports SET progress = $3, updated_at = now() WHERE id = $1 AND claimed_epoch = $2', [job.id, epoch, progress])
          : tx.query('SELECT 1 FROM imports WHERE id = $1 AND claimed_epoch = $2', [job.id, epoch]),
      ).then(
        ({ rowCount }) => {
          if (rowCount === 0) stop.abort(new Stopped(true));
        },
        (err: unknown) => {
          if (err instanceof FencedError) stop.abort(new Stopped(false));
        },
      );
    }, PROGRESS_MS);
    heartbeat.unref();
    const dir = await mkdtemp(join(tmpdir(), 'plumb-import-'));
    const importSite: ImportSite = { id: site.id, domain: site.domain, timezone: site.timezone, tenant };
    try {
      const files = await materialise(job.id, dir);
      const ctx = {
        site: importSite,
        importId: job.id,
        store,
        now: new Date(),
        signal: stop.signal,
        progress(read: number, total?: number) {
          rowsRead = read;
          if (total !== undefined) rowsTotal = total;
        },
        // Only a run adds goals and funnels, as the import's creator; each is recorded on the import at once.
        setup:
          job.state === 'running' && actor
            ? importSetup(runtime.metadata(), actor, site.id, async (column, id) => {
                const { rowCount } = await fenced((tx) => tx.query(`UPDATE imports SET ${column} = array_append(${column}, $3) WHERE id = $1 AND claimed_epoch = $2`, [job.id, epoch, id]));
                if (rowCount === 0) {
                  // The import was deleted (or taken over) meanwhile: stop as the heartbeat would.
                  stop.abort(new Stopped(true));
                  throw stop.signal.reason;
                }
              })
            : undefined,
      };
      if (job.state === 'validating') {
        const manifest = await source.validate(files, ctx);
        if (stop.signal.aborted) throw stop.signal.reason;
        await settle(job, "state = 'validated', manifest = $3, progress = NULL, error = NULL", [JSON.stringify(manifest)]);
        return;
      }
      const manifest = await source.run(files, ctx);
      if (stop.signal.aborted) throw stop.signal.reason;
      const done = await settle(
        job,
        "state = 'completed', manifest = $3, progress = $4, error = NULL, completed_at = now()",
        [JSON.stringify(manifest), JSON.stringify({ rows_read: manifest.rows_scanned, rows_total: manifest.rows_scanned })],
        async (tx) => {
          await dropStaged(tx, job.id);
          await queueOperationalEvent(tx, 'import.completed', { site_id: site.id, import_id: job.id, source: job.source, rows_accepted: manifest.rows_accepted, from: manifest.from, to: manifest.to });
          await writeAudit(tx, {
            teamId: site.team_id,
            action: 'import.completed',
            site: { id: site.id, domain: site.domain },
            details: `the ${job.source} import wrote ${manifest.rows_accepted} rows${manifest.from ? ` from ${manifest.from} to ${manifest.to}` : ''}${manifest.rows_skipped > 0 ? `, leaving out ${manifest.rows_skipped}` : ''}`,
          });
        },
      );
      // Deleted as it finished: what it wrote goes too.
      if (!done) await deleteImportRows(store, importSite.tenant, site.id, job.id);
      else log.info({ import: job.id, rows: manifest.rows_accepted }, 'import completed');
    } catch (err) {
      const reason = stop.signal.aborted ? stop.signal.reason : null;
      if (reason instanceof Stopped && !reason.deleted) return; // the next leader cleans up and runs it again
      if (job.state === 'running') await undoRun();
      if (reason instanceof Stopped) return; // deleted: nothing is left to record
      const error =
        err instanceof ImportInputError
          ? { message: err.message, file: err.file, line: err.line }
          : { message: `the import could not be completed: ${(err as Error).message}`, file: null, line: null };
      if (!(err instanceof ImportInputError)) log.error({ err, import: job.id }, 'import failed unexpectedly');
      await fail(job, site, error);
    } finally {
      clearInterval(heartbeat);
      signal.removeEventListener('abort', onLeaderStop);
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Staged bytes of imports unfinished for a week go, and those imports fail. */
  async function sweep(): Promise<void> {
    await fenced(async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        `UPDATE imports SET state = 'failed', error = $1, updated_at = now()
          WHERE state IN ('pending', 'validated') AND created_at < now() - make_interval(days => $2)
          RETURNING id`,
        [JSON.stringify({ message: `the uploaded files were kept ${STAGED_DAYS} days without the import being run, and were deleted`, file: null, line: null }), STAGED_DAYS],
      );
      const stale = rows.map((r) => r.id);
      if (stale.length === 0) return;
      await tx.query('DELETE FROM import_chunks WHERE import_id = ANY($1::uuid[])', [stale]);
      await tx.query('UPDATE import_files SET received = 0, complete = false WHERE import_id = ANY($1::uuid[])', [stale]);
    });
  }

  async function tick(signal: AbortSignal): Promise<void> {
    if (!claimsReset) {
      // Nothing has run under this leadership yet: every claim is an earlier leader's (with a single
      // node, epochs restart at 1 with the process, so an earlier claim can carry this same number).
      await fenced((tx) => tx.query('UPDATE imports SET claimed_epoch = 0 WHERE claimed_epoch IS NOT NULL'));
      claimsReset = true;
    }
    if (Date.now() - lastSweep >= SWEEP_MS) {
      lastSweep = Date.now();
      await sweep();
    }
    if (!(await anyWaiting())) return;
    for (let job = await claim(); job && !signal.aborted; job = signal.aborted ? null : await claim()) {
      await step(job, signal);
    }
  }

  function schedule(ms: number): void {
    clearTimeout(timer);
    timer = setTimeout(round, ms);
    timer.unref();
  }

  function round(): void {
    const signal = abort!.signal;
    let failed = false;
    wokenMidRound = false;
    running = tick(signal)
      .catch((err: unknown) => {
        failed = true;
        if (!signal.aborted) log.warn({ err }, 'imports: a round of work failed; trying again shortly');
      })
      .finally(() => {
        running = undefined;
        if (!signal.aborted) schedule(wokenMidRound ? 0 : failed ? RETRY_MS : RECHECK_MS);
      });
  }

  return {
    start(leaderEpoch) {
      epoch = leaderEpoch;
      abort = new AbortController();
      lastSweep = 0;
      claimsReset = false;
      // A new leader looks at once: its predecessor may have died in the middle of an import.
      schedule(0);
    },
    async stop() {
      clearTimeout(timer);
      abort?.abort();
      await running;
    },
    wake() {
      if (abort === undefined || abort.signal.aborted) return;
      if (running) wokenMidRound = true;
      else schedule(0);
    },
  };
}
