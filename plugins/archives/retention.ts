// Per-site retention: a site's analytics rows older than its retention are written to a Parquet
// archive in the target, checked, and only then deleted from the analytics store. A check that
// fails (fewer rows in the file than counted, a stored size that differs, rows that arrived
// meanwhile) deletes nothing: the next run tries again.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PluginHost } from '../../lib/plugins/api.ts';
import { parquetRows } from './backup.ts';
import type { ArchiveTarget } from './targets.ts';

export const RETENTION_PREFIX = 'retention/';

/** The time zone's wall clock at `instant`, as if it were UTC (milliseconds). */
function wallClock(instant: number, timezone: string): { ms: number; day: [number, number, number] } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(instant))
      .map((part) => [part.type, Number(part.value)]),
  );
  return { ms: Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second), day: [parts.year, parts.month - 1, parts.day] };
}

/** The start of the day `days` days before today in the site's time zone, as a UTC instant. */
export function retentionCutoff(now: Date, timezone: string, days: number): Date {
  const today = wallClock(now.getTime(), timezone).day;
  const midnight = Date.UTC(today[0], today[1], today[2] - days);
  // The zone's offset at that midnight (not today's: a daylight-saving change may lie between).
  let instant = midnight;
  for (let i = 0; i < 2; i++) instant = midnight - (wallClock(instant, timezone).ms - Math.floor(instant / 1000) * 1000);
  return new Date(instant);
}

export interface RetentionResult {
  siteId: string;
  table: string;
  rows: number;
  key: string;
}

/** Archives and deletes every expired row of every site with a retention; returns what moved. */
export async function applyRetention(
  host: PluginHost<unknown>,
  target: ArchiveTarget,
  options: { stagingDir: string; epoch: number; signal: AbortSignal; now?: Date },
): Promise<RetentionResult[]> {
  const archive = host.archive;
  if (!archive) throw new Error('the archives plugin runs without its archive capability');
  const { rows: sites } = await host.metadata.query<{ site_id: string; retention_days: number }>(
    'SELECT site_id, retention_days FROM site_retention WHERE retention_days IS NOT NULL ORDER BY site_id',
  );
  const moved: RetentionResult[] = [];
  const staging = await mkdtemp(join(options.stagingDir, 'plumb-retention-'));
  try {
    for (const { site_id: siteId, retention_days: days } of sites) {
      const site = await host.site(siteId);
      if (!site) continue;
      const before = retentionCutoff(options.now ?? new Date(), site.timezone, days);
      for (const { table } of archive.siteTables) {
        options.signal.throwIfAborted();
        const counted = await archive.countSiteRows(siteId, table, before);
        if (counted === 0) continue;
        const filePath = join(staging, `${table}.parquet`);
        await archive.exportSiteRows(siteId, table, before, filePath);
        const rows = await parquetRows(filePath);
        if (rows !== counted) {
          host.log.warn({ site: siteId, table, counted, rows }, 'retention: the archive does not hold the rows counted; nothing deleted');
          continue;
        }
        const day = before.toISOString().slice(0, 10);
        const key = `${RETENTION_PREFIX}${siteId}/${table}/before-${day}-${randomUUID()}.parquet`;
        // putFile hashes the bytes as it sends them; the target's own listing then says what it kept.
        const written = (await stat(filePath)).size;
        const stored = await target.putFile(key, filePath);
        const listed = await target.list(key);
        await rm(filePath, { force: true });
        if (stored.bytes !== written || listed[0]?.size !== written) {
          await target.delete([key]);
          host.log.warn({ site: siteId, table, key }, 'retention: the stored archive differs from the file written; nothing deleted');
          continue;
        }
        // Rows that arrived meanwhile with an old timestamp are not in the archive: keep them all for the next run.
        if ((await archive.countSiteRows(siteId, table, before)) !== counted) {
          await target.delete([key]);
          continue;
        }
        // Recorded under the leader's epoch: a deposed leader's archive is dropped, its rows kept.
        try {
          await host.metadata.transaction(
            (tx) =>
              tx.query(
                `INSERT INTO retention_archives (id, site_id, table_name, before, rows, bytes, sha256, object_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
                [randomUUID(), siteId, table, before.toISOString(), rows, stored.bytes, stored.sha256, key],
              ),
            { fencedBy: options.epoch },
          );
        } catch (err) {
          await target.delete([key]);
          throw err;
        }
        await archive.deleteSiteRows(siteId, table, before);
        await host.audit({
          teamId: site.team_id,
          action: 'retention_archived',
          site: { id: site.id, domain: site.domain },
          details: `archived ${rows} ${table.replace('_', ' ')} rows of ${site.domain} from before ${day} to ${target.location} and deleted them (retention ${days} days)`,
        });
        moved.push({ siteId, table, rows, key });
      }
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return moved;
}
