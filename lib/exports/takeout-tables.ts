// What a site's takeout holds of its analytics: every tenant table of the site, each as one file
// (or sheet) with the columns below, in table order. Left out everywhere: `site_id` (one site per
// takeout, named in its manifest), `import_id` (which import wrote a row means nothing elsewhere),
// and the visits' `sign`/`version` (the takeout holds each visit's live state once, so there is
// nothing to collapse). `hits.engagement_ms` is always 0 (engagement is recorded as events).
// Arrays and maps (visits' pages, events' props) are JSON text in every format, and an empty
// revenue or scroll depth is an empty string, so a row reads the same in CSV, JSON and Parquet.
// The Plumb import source (lib/imports/sources/plumb.ts) reads these definitions back.

/** A column's type as a takeout manifest names it. */
export type TakeoutType = 'timestamp' | 'date' | 'uuid' | 'string' | 'integer' | 'int64' | 'float' | 'json' | 'decimal' | 'boolean';

export interface TakeoutColumn {
  name: string;
  type: TakeoutType;
}

/** A tenant table as a takeout writes it. */
export interface AnalyticsTakeoutTable {
  /** The file's name (without extension), the sheet's name, and the tenant table. */
  name: string;
  table: string;
  columns: readonly TakeoutColumn[];
  /** Columns giving the rows a total order (the file is sorted by them). */
  order: readonly string[];
  /** The visits table keeps several states of a visit until merged: only live ones are written. */
  collapsed?: boolean;
}

const cols = (spec: string): TakeoutColumn[] =>
  spec
    .trim()
    .split(/\s*,\s*/)
    .map((pair) => {
      const [name, type] = pair.split(':');
      return { name, type: type as TakeoutType };
    });

const UTM = 'utm_source:string, utm_medium:string, utm_campaign:string, utm_term:string, utm_content:string';
/** The daily figures of every imported_* table but imported_visitors and imported_custom_events. */
const FIGURES = 'visitors:int64, visits:int64, visit_duration:int64, bounces:integer, pageviews:int64';

export const ANALYTICS_TAKEOUT_TABLES: readonly AnalyticsTakeoutTable[] = [
  {
    name: 'pageviews',
    table: 'hits',
    columns: cols(`ts:timestamp, session_id:int64, visitor_id:int64, hit_id:uuid, path:string, hostname:string, referrer:string,
      referrer_source:string, channel:string, ${UTM}, country:string, region:string, browser:string, browser_version:string,
      os:string, os_version:string, device:string, screen_width:integer, is_entry:integer, source:string`),
    order: ['ts', 'hit_id'],
  },
  {
    name: 'events',
    table: 'events',
    columns: cols(`ts:timestamp, session_id:int64, visitor_id:int64, event_id:uuid, name:string, path:string, hostname:string,
      referrer:string, referrer_source:string, channel:string, ${UTM}, country:string, region:string, browser:string, os:string,
      device:string, props:json, revenue:decimal, source:string`),
    order: ['ts', 'event_id'],
  },
  {
    name: 'visits',
    table: 'visits',
    columns: cols(`session_id:int64, visitor_id:int64, start:timestamp, first_ts:timestamp, last_ts:timestamp, visit_pageviews:integer,
      events:integer, visit_engagement_ms:int64, entry_page:string, exit_page:string, pages:json, page_hits:json, hostnames:json,
      hostname_hits:json, referrer:string, referrer_source:string, channel:string, ${UTM}, country:string, region:string,
      browser:string, os:string, device:string`),
    order: ['start', 'session_id'],
    collapsed: true,
  },
  {
    name: 'web_vitals',
    table: 'web_vitals',
    columns: cols('ts:timestamp, session_id:int64, path:string, metric:string, value:float, rating:string, device:string, country:string'),
    order: ['ts', 'session_id', 'metric', 'path'],
  },
  {
    name: 'ai_fetches',
    table: 'ai_fetches',
    columns: cols(`ts:timestamp, fetch_id:uuid, path:string, url:string, status_code:integer, content_type:string, response_time_ms:integer,
      bytes:int64, user_agent:string, assistant_name:string, assistant_family:string, assistant_category:string, resource_type:string`),
    order: ['ts', 'fetch_id'],
  },
  {
    name: 'imported_visitors',
    table: 'imported_visitors',
    columns: cols('date:date, visitors:int64, pageviews:int64, bounces:int64, visits:int64, visit_duration:int64'),
    order: ['date'],
  },
  {
    name: 'imported_sources',
    table: 'imported_sources',
    columns: cols(`date:date, source:string, referrer:string, utm_source:string, utm_medium:string, utm_campaign:string,
      utm_content:string, utm_term:string,
      pageviews:int64, visitors:int64, visits:int64, visit_duration:int64, bounces:integer`),
    order: ['date', 'source', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'],
  },
  {
    name: 'imported_pages',
    table: 'imported_pages',
    columns: cols('date:date, hostname:string, page:string, visits:int64, visitors:int64, pageviews:int64, scroll_depth:decimal, pageleave_visitors:int64'),
    order: ['date', 'hostname', 'page'],
  },
  {
    name: 'imported_entry_pages',
    table: 'imported_entry_pages',
    columns: cols('date:date, entry_page:string, visitors:int64, entrances:int64, visit_duration:int64, bounces:integer, pageviews:int64'),
    order: ['date', 'entry_page'],
  },
  {
    name: 'imported_exit_pages',
    table: 'imported_exit_pages',
    columns: cols('date:date, exit_page:string, visitors:int64, visit_duration:int64, exits:int64, bounces:integer, pageviews:int64'),
    order: ['date', 'exit_page'],
  },
  {
    name: 'imported_locations',
    table: 'imported_locations',
    columns: cols(`date:date, country:string, region:string, city:int64, ${FIGURES}`),
    order: ['date', 'country', 'region', 'city'],
  },
  { name: 'imported_devices', table: 'imported_devices', columns: cols(`date:date, device:string, ${FIGURES}`), order: ['date', 'device'] },
  {
    name: 'imported_browsers',
    table: 'imported_browsers',
    columns: cols(`date:date, browser:string, browser_version:string, ${FIGURES}`),
    order: ['date', 'browser', 'browser_version'],
  },
  {
    name: 'imported_operating_systems',
    table: 'imported_operating_systems',
    columns: cols(`date:date, operating_system:string, operating_system_version:string, ${FIGURES}`),
    order: ['date', 'operating_system', 'operating_system_version'],
  },
  {
    name: 'imported_custom_events',
    table: 'imported_custom_events',
    columns: cols('date:date, name:string, link_url:string, path:string, visitors:int64, events:int64'),
    order: ['date', 'name', 'link_url', 'path'],
  },
];

/**
 * The SELECT expression of a column: timestamps and days as ISO 8601 text in the text formats
 * (a UTC timestamp and a date in Parquet), arrays and maps as JSON text, an absent decimal as ''.
 * Columns are qualified (`row.ts`) because a converted column takes the column's name as its alias.
 */
export function columnSql(column: TakeoutColumn, parquet: boolean): string {
  const ref = `row.${column.name}`;
  switch (column.type) {
    case 'timestamp':
      return parquet ? ref : `concat(replaceOne(toString(${ref}), ' ', 'T'), 'Z') AS ${column.name}`;
    case 'date':
      return parquet ? ref : `toString(${ref}) AS ${column.name}`;
    case 'json':
      return `toJSONString(${ref}) AS ${column.name}`;
    case 'decimal':
      return `ifNull(toString(${ref}), '') AS ${column.name}`;
    default:
      return ref;
  }
}

/**
 * Where a table's rows come from. A collapsed table (visits) holds each state of a visit and the
 * cancellation of the state it replaced (same version, sign -1) until merged: the live states are
 * those no cancellation names, which a visit's start keeps in the same slice. Read so rather than
 * with FINAL, which reads the parts side by side in key order: on 2M visits FINAL grew the node by
 * ~180 MiB during a takeout, this by ~110, what the first read of any table costs.
 */
function rowsSource(table: AnalyticsTakeoutTable, where: (alias: string) => string): string {
  if (!table.collapsed) return `{db:Identifier}.${table.table} AS row WHERE ${where('row')}`;
  return `{db:Identifier}.${table.table} AS row
    WHERE ${where('row')} AND row.sign = 1
      AND (row.session_id, row.version) NOT IN (SELECT cancelled.session_id, cancelled.version FROM {db:Identifier}.${table.table} AS cancelled WHERE ${where('cancelled')} AND cancelled.sign = -1)`;
}

/** The one SELECT of a table's rows for the site, in its total order; every value is bound. */
export function takeoutQuery(table: AnalyticsTakeoutTable, parquet: boolean, slice = false): string {
  const time = timeOf(table);
  const where = (alias: string) => `${alias}.site_id = {site:UUID}${slice ? ` AND ${alias}.${time} >= {from:DateTime64(3)} AND ${alias}.${time} < {to:DateTime64(3)}` : ''}`;
  return `
    SELECT ${table.columns.map((column) => columnSql(column, parquet)).join(', ')}
    FROM ${rowsSource(table, where)}
    ORDER BY ${orderOf(table)}`;
}

/** The time column of the table: its rows are sliced by it (lib/exports/slices.ts). */
export const timeOf = (table: AnalyticsTakeoutTable) => table.columns.find((column) => column.type === 'timestamp' || column.type === 'date')!.name;

/** takeoutQuery bounded to one slice of time (`{from}`, `{to}`). */
export function takeoutSliceQuery(table: AnalyticsTakeoutTable, parquet: boolean): string {
  return takeoutQuery(table, parquet, true);
}

/**
 * The table's total order, led by the day when it starts with a time, as the tables' sorting keys
 * are (after the site): ClickHouse then reads in that order and sorts a day at a time instead of
 * the whole history in memory. The same order, since the day only follows the time.
 */
function orderOf(table: AnalyticsTakeoutTable): string {
  const columns = table.order.map((name) => `row.${name}`);
  const first = table.columns.find((column) => column.name === table.order[0]);
  return (first?.type === 'timestamp' ? [`toDate(${columns[0]})`, ...columns] : columns).join(', ');
}
