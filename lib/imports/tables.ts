// Rows an import wrote: every tenant table of a site carries import_id (the raw tables and the
// imported_* daily aggregates of migration 0004; the zero UUID for data Plumb collected itself).
// Deleting an import, or cleaning up a failed one, deletes its rows from each.
import { TENANT_TABLES } from '../sites/transfer.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';

/** The import_id of rows Plumb collected itself. */
export const NATIVE_IMPORT_ID = '00000000-0000-0000-0000-000000000000';

/** Lightweight DELETE of the import's rows in every table, as a site's deletion removes its rows: gone from reads when it returns. */
export async function deleteImportRows(store: AnalyticsStore, db: string, siteId: string, importId: string): Promise<void> {
  for (const table of TENANT_TABLES) {
    await store.command(`DELETE FROM {db:Identifier}.${table} WHERE site_id = {site:UUID} AND import_id = {import:UUID}`, { db, site: siteId, import: importId });
  }
}
