// The leader's daily sync of a connected site: every day from the oldest the API keeps (16 months)
// to yesterday, oldest first, each day's four breakdowns fetched whole (paged by startRow) and
// written as one insert with a new version, then the day recorded as done in a fenced transaction.
// A sync stopped anywhere (an error, the leader stepping down) resumes at the first day not
// recorded; a day written twice is read once (the newest version, see analytics/0001_search_rows.sql).
import type { PluginHost } from '../../lib/plugins/api.ts';
import type { GoogleClient } from './google.ts';

export const TABLE = 'plugin_search_console_rows';
/** The breakdowns fetched for every day, each with the date: the dimension names Google takes. */
export const DIMENSIONS = ['query', 'page', 'country', 'device'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
/** Google revises its last few days: each run fetches them again. */
const REFETCH_DAYS = 3;

export interface Connection {
  site_id: string;
  refresh_token: string;
  property: string | null;
  synced_through: string | null;
}

const DAY_MS = 86_400_000;
export const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const addDays = (day: string, days: number) => isoDay(new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS));

/**
 * The days a run fetches, oldest first: those after the last one synced (all the API keeps, the
 * first time), and always the last few, which Google may have revised; never today (UTC), which is
 * not over.
 */
export function daysToSync(syncedThrough: string | null, today: Date, backfillDays: number): string[] {
  const last = addDays(isoDay(today), -1);
  const oldest = addDays(isoDay(today), -backfillDays);
  // ISO days compare as strings.
  const earliest = [addDays(last, 1 - REFETCH_DAYS), syncedThrough ? addDays(syncedThrough, 1) : oldest].sort()[0];
  const first = [earliest, oldest].sort()[1];
  const days: string[] = [];
  for (let day = first; day <= last; day = addDays(day, 1)) days.push(day);
  return days;
}

/** Thrown between pages once the job is told to stop: the run ends, and the next one resumes. */
export class SyncStopped extends Error {}

let lastVersion = 0;
/** Increasing across runs of this process and later than any earlier leader's (wall clock, in µs). */
const nextVersion = () => {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
};

export interface SyncOptions {
  google: GoogleClient;
  epoch: number;
  rowLimit: number;
  backfillDays: number;
  stopped: () => boolean;
  now?: Date;
}

/** Syncs one connection; the metadata writes are fenced by `epoch`. Resolves with the days written. */
export async function syncSite(host: PluginHost, connection: Connection, options: SyncOptions): Promise<number> {
  const { property } = connection;
  if (!property) return 0;
  const refreshToken = host.secrets.open(connection.refresh_token, connection.site_id);
  if (!refreshToken) throw new Error('the stored refresh token cannot be opened (was the instance secret changed?): connect the site again');
  const accessToken = await options.google.accessToken(refreshToken);
  let written = 0;
  for (const day of daysToSync(connection.synced_through, options.now ?? new Date(), options.backfillDays)) {
    for (const dimension of DIMENSIONS) {
      const rows: Record<string, unknown>[] = [];
      for (let startRow = 0; ; startRow += options.rowLimit) {
        if (options.stopped()) throw new SyncStopped('the sync was stopped');
        const page = await options.google.queryPage(accessToken, property, day, ['date', dimension], startRow, options.rowLimit);
        for (const row of page) {
          rows.push({ site_id: connection.site_id, property, dimension, day, key: String(row.keys?.[1] ?? ''), clicks: row.clicks, impressions: row.impressions, position_sum: row.position * row.impressions });
        }
        if (page.length < options.rowLimit) break;
      }
      if (options.stopped()) throw new SyncStopped('the sync was stopped');
      // One insert per day and dimension: a day's copy is all there or not at all.
      const version = nextVersion();
      if (rows.length > 0) await host.analytics.insert(connection.site_id, TABLE, rows.map((row) => ({ ...row, version })));
    }
    // Fenced: once a newer leader leads, this one records nothing more (and stops at its next check).
    const { rowCount } = await host.metadata.transaction(
      (tx) => tx.query('UPDATE connections SET synced_through = $3::date WHERE site_id = $1 AND property = $2 AND (synced_through IS NULL OR synced_through < $3::date)', [connection.site_id, property, day]),
      { fencedBy: options.epoch },
    );
    if (rowCount === 0) {
      // Disconnected, another property chosen, or already further (re-fetching a recent day): only the first two end the run.
      const { rows } = await host.metadata.query<{ property: string | null }>('SELECT property FROM connections WHERE site_id = $1', [connection.site_id]);
      if (rows[0]?.property !== property) throw new SyncStopped('the site was disconnected or switched to another property');
    }
    written++;
  }
  return written;
}
