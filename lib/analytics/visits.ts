// The `visits` table rebuilt from the pageviews and events stored: the backfill statement of
// migration 0003, run again. For data loaded straight into `hits`/`events` (benchmark data sets,
// query tests, an operator's bulk import) rather than through the ingest pipeline, which writes
// visits as it goes.
import { loadMigrations } from '../stores/analytics/migrations.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';

const BACKFILL = (() => {
  const migration = loadMigrations().find((m) => m.name === '0003_visits');
  const statement = migration?.statements.find((s) => s.startsWith('INSERT INTO {db:Identifier}.visits'));
  if (!statement) throw new Error('migration 0003_visits has no backfill statement');
  return statement;
})();

/** Replaces the tenant's visits with those its hits and events describe. */
export async function rebuildVisits(store: AnalyticsStore, db: string): Promise<void> {
  await store.command('TRUNCATE TABLE {db:Identifier}.visits', { db });
  await store.command(BACKFILL, { db });
}
