// What the dashboard's Export menu offers (the raw tables and the file formats) and the address of
// the file it links to.
import { withQuery } from '../api.ts';
import type { DateRange } from './range.ts';

export const RAW_TABLES = [
  { id: 'pageviews', label: 'Pageviews', route: 'hits/export' },
  { id: 'ai-fetches', label: 'AI fetches', route: 'ai-fetch/export' },
] as const;

export const FILE_FORMATS = [
  { id: 'csv', label: 'CSV' },
  { id: 'xlsx', label: 'Excel (xlsx)' },
  { id: 'json', label: 'JSON' },
  { id: 'ndjson', label: 'NDJSON (one JSON object a line)' },
  { id: 'parquet', label: 'Parquet' },
] as const;

export type TableId = (typeof RAW_TABLES)[number]['id'];
export type FormatId = (typeof FILE_FORMATS)[number]['id'];

/** The export route's address for a table, range (site-local dates, `to` included) and format. */
export function exportHref(siteId: string, table: TableId, range: DateRange, format: FormatId): string {
  const route = RAW_TABLES.find((t) => t.id === table)!.route;
  return withQuery(`/api/sites/${encodeURIComponent(siteId)}/${route}`, { from: range.from, to: range.to, format });
}
