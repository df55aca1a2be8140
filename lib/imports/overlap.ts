// The dry run's "overlap": the days of an import's range that already hold data Plumb collected
// itself. One definition for every source: a local day of the site with a live visit whose
// import_id is the zero UUID.
import { startOfLocalDay } from '../analytics/range.ts';
import type { ImportContext, ImportManifest } from './source.ts';
import { NATIVE_IMPORT_ID } from './tables.ts';

const DAY_MS = 86_400_000;

/** The native days from `from` to `to` (YYYY-MM-DD, the site's local days, both included). */
export async function nativeOverlap(ctx: ImportContext, from: string | null, to: string | null): Promise<ImportManifest['overlap']> {
  if (from === null || to === null) return { days: 0, from: null, to: null };
  const next = new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
  const [row] = await ctx.store.query<{ days: string; first: string; last: string }>(
    `SELECT count() AS days, toString(min(day)) AS first, toString(max(day)) AS last
       FROM (SELECT toDate(toTimeZone(start, {tz:String})) AS day
               FROM {db:Identifier}.visits
              WHERE site_id = {site:UUID} AND import_id = {native:UUID}
                AND start >= {from:DateTime64(3)} AND start < {to:DateTime64(3)}
              GROUP BY day
             HAVING sum(sign) > 0)`,
    { db: ctx.site.tenant, site: ctx.site.id, native: NATIVE_IMPORT_ID, tz: ctx.site.timezone, from: startOfLocalDay(from, ctx.site.timezone), to: startOfLocalDay(next, ctx.site.timezone) },
  );
  const days = Number(row?.days ?? 0);
  return days === 0 ? { days: 0, from: null, to: null } : { days, from: row.first, to: row.last };
}
