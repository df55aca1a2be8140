// The `visits` table built from the pageviews and events stored, by the backfill statement of
// migration 0003 — the one definition of a visit from its rows — widened to carry each row's
// import_id (migration 0004) and to be run over all of a tenant's rows (a rebuild, for data loaded
// straight into `hits`/`events`: benchmark data sets, query tests) or over one import's rows (the
// visits of imported pageviews, lib/imports/raw.ts). The ingest pipeline writes visits as it goes.
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { loadMigrations } from '../stores/analytics/migrations.ts';
import { forgetAllCountsStatements } from './query/daily-breakdowns.ts';

const BACKFILL = (() => {
  const migration = loadMigrations().find((m) => m.name === '0003_visits');
  const statement = migration?.statements.find((s) => s.startsWith('INSERT INTO {db:Identifier}.visits'));
  if (!statement) throw new Error('migration 0003_visits has no backfill statement');
  return statement;
})();

/** Replaces the one match of `pattern` in the statement; a statement that no longer matches fails at load, not later. */
function rewrite(statement: string, pattern: RegExp, replacement: string): string {
  const matches = statement.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`)) ?? [];
  if (matches.length !== 1) throw new Error(`the visits backfill of migration 0003 no longer has exactly one match for ${pattern}`);
  return statement.replace(pattern, replacement);
}

/**
 * The backfill with import_id: a visit is grouped within one import (rows Plumb collected having
 * the zero id), takes that id, and `rows` filters the hits and events it reads.
 */
function visitsStatement(rows: string): string {
  let sql = rewrite(BACKFILL, /\.visits\s+\(site_id,/, '.visits\n    (import_id, site_id,');
  sql = rewrite(sql, /SELECT v\.site_id,/, 'SELECT v.import_id, v.site_id,');
  sql = rewrite(sql, /FROM \(SELECT site_id, session_id,/, 'FROM (SELECT import_id, site_id, session_id,');
  sql = rewrite(sql, /JOIN \(SELECT site_id, session_id,/, 'JOIN (SELECT import_id, site_id, session_id,');
  sql = rewrite(sql, /FROM \{db:Identifier\}\.hits\s+GROUP BY site_id, session_id/, `FROM {db:Identifier}.hits ${rows} GROUP BY import_id, site_id, session_id`);
  sql = rewrite(sql, /FROM \{db:Identifier\}\.events\s+GROUP BY site_id, session_id/, `FROM {db:Identifier}.events ${rows} GROUP BY import_id, site_id, session_id`);
  return rewrite(sql, /ON e\.site_id = v\.site_id/, 'ON e.import_id = v.import_id AND e.site_id = v.site_id');
}

const ALL_ROWS = visitsStatement('');
const IMPORT_ROWS = visitsStatement('WHERE site_id = {site:UUID} AND import_id = {import:UUID}');

/** Replaces the tenant's visits with those its hits and events describe, forgetting the daily breakdowns counted from the old ones. */
export async function rebuildVisits(store: AnalyticsStore, db: string): Promise<void> {
  for (const statement of forgetAllCountsStatements(db)) await store.command(statement.sql, statement.params);
  await store.command('TRUNCATE TABLE {db:Identifier}.visits', { db });
  await store.command(ALL_ROWS, { db });
}

/** Adds the visits of one import's hits and events (each with the import's id); the import must have written none yet. */
export async function buildImportVisits(store: AnalyticsStore, db: string, siteId: string, importId: string): Promise<void> {
  await store.command(IMPORT_ROWS, { db, site: siteId, import: importId });
}
