// Counts of requests refused at ingest (bots, …) per site, day and reason. Counted in memory on the
// hot path and written to the metadata store in one upsert per flush, never per request.
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { utcDay } from './salts.ts';

export interface RejectionCounter {
  count(siteId: string, reason: string, at?: Date): void;
  flush(): Promise<void>;
}

export function createRejectionCounter(db: () => MetadataQueryable): RejectionCounter {
  let pending = new Map<string, number>();
  return {
    count(siteId, reason, at = new Date()) {
      const key = `${siteId}|${utcDay(at)}|${reason}`;
      pending.set(key, (pending.get(key) ?? 0) + 1);
    },
    async flush() {
      if (pending.size === 0) return;
      const batch = pending;
      pending = new Map();
      const rows = [...batch].map(([key, count]) => [...key.split('|'), count] as const);
      try {
        await db().query(
          `INSERT INTO ingest_rejections (site_id, day, reason, count)
           SELECT r.site_id, r.day, r.reason, r.count
             FROM unnest($1::uuid[], $2::date[], $3::text[], $4::bigint[]) AS r (site_id, day, reason, count)
            -- a site deleted since the count was taken must not fail the whole flush
            WHERE EXISTS (SELECT 1 FROM sites WHERE id = r.site_id)
           ON CONFLICT (site_id, day, reason) DO UPDATE SET count = ingest_rejections.count + EXCLUDED.count`,
          [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])],
        );
      } catch (err) {
        // Keep the counts for the next flush rather than lose them.
        for (const [key, count] of batch) pending.set(key, (pending.get(key) ?? 0) + count);
        throw err;
      }
    },
  };
}
