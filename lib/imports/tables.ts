// The tenant tables an import can write to: the raw tables (every row carries import_id, the zero
// UUID for data Plumb collected itself) and the imported_* daily aggregate tables of migration
// 0004. Deleting an import, or cleaning up a failed one, deletes its rows from each.
import { TENANT_TABLES } from '../sites/transfer.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';

export const IMPORTED_TABLES = [
  'imported_visitors',
  'imported_sources',
  'imported_pages',
  'imported_entry_pages',
  'imported_exit_pages',
  'imported_locations',
  'imported_devices',
  'imported_browsers',
  'imported_operating_systems',
  'imported_custom_events',
] as const;

export const IMPORT_TABLES = [...TENANT_TABLES, ...IMPORTED_TABLES] as const;

/** The import_id of rows Plumb collected itself. */
export const NATIVE_IMPORT_ID = '00000000-0000-0000-0000-000000000000';

/** Lightweight DELETE of the import's rows in every table, as a site's deletion removes its rows: gone from reads when it returns. */
export async function deleteImportRows(store: AnalyticsStore, db: string, siteId: string, importId: string): Promise<void> {
  for (const table of IMPORT_TABLES) {
    await store.command(`DELETE FROM {db:Identifier}.${table} WHERE site_id = {site:UUID} AND import_id = {import:UUID}`, { db, site: siteId, import: importId });
  }
}
