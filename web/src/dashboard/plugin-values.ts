// How the dashboard writes a value a plugin sends (a KPI, a table cell, a read-only settings
// field): by the format its descriptor gives, else as the dashboard writes values everywhere,
// numbers in the reader's locale and RFC 3339 times on the page's clock. Nothing is a dash.
import { countryName } from './filters.ts';
import { formatBytes, formatNumber } from './format.ts';

/** How a plugin asks for a value to be written (GET /api/dashboard/plugins). */
export type ValueFormat = 'number' | 'bytes' | 'datetime' | 'country';

/** An RFC 3339 UTC string as Plumb and its plugins write times: taken for one when no format is given. */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** `value` as the page shows it; `moment` writes dates and times (the site's clock on a site's pages). */
export function shownValue(value: unknown, format: ValueFormat | undefined, moment: Intl.DateTimeFormat): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'number') return format === 'bytes' && Number.isFinite(value) ? formatBytes(value) : formatNumber(value);
  if (typeof value === 'string') {
    // Named as Plumb's own Locations panel names countries, in the reader's language.
    if (format === 'country') return countryName(value);
    const datetime = format === 'datetime' || (format === undefined && ISO_TIME.test(value));
    const at = datetime ? new Date(value) : null;
    return at && !Number.isNaN(at.getTime()) ? moment.format(at) : value;
  }
  // A list (a read-only array field): its values, each written as a value is.
  if (Array.isArray(value)) return value.length === 0 ? '—' : value.map((item) => shownValue(item, format, moment)).join(', ');
  return JSON.stringify(value);
}
