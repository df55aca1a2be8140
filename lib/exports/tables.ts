// What an export of a table holds: its columns in table order, each with the JSON shape it takes
// in a json/ndjson export (the OpenAPI document shows these), and the filters it accepts.
//
// Left out, because they mean nothing outside Plumb: `site_id` (one site per export, named in the
// file's name) and `hits.engagement_ms` (always 0: engagement is recorded as `$engagement`
// events). Kept: `session_id` and `visitor_id`, the only way to count visits and visitors from
// raw pageviews. They are hashes salted per day (the salt deleted after two days), so they link
// a person's pageviews within a day and lead back to no IP address.
import { type TSchema, Type } from '@sinclair/typebox';
import { DateTime, object, Uuid } from '../openapi/responses.ts';

type ColumnKind = 'time' | 'uuid' | 'text' | 'integer' | 'int64';

export interface ExportTable {
  /** The ClickHouse table. */
  table: 'hits' | 'ai_fetches';
  /** What the file holds, in its name. */
  label: string;
  /** The column that makes the order total after `ts`. */
  rowId: string;
  columns: readonly (readonly [name: string, kind: ColumnKind])[];
  /** Columns a request may restrict by exact value. */
  filters: readonly string[];
}

export const PAGEVIEWS: ExportTable = {
  table: 'hits',
  label: 'pageviews',
  rowId: 'hit_id',
  columns: [
    ['ts', 'time'], ['session_id', 'int64'], ['visitor_id', 'int64'], ['hit_id', 'uuid'], ['path', 'text'], ['hostname', 'text'],
    ['referrer', 'text'], ['referrer_source', 'text'], ['channel', 'text'], ['utm_source', 'text'], ['utm_medium', 'text'],
    ['utm_campaign', 'text'], ['utm_term', 'text'], ['utm_content', 'text'], ['country', 'text'], ['region', 'text'],
    ['browser', 'text'], ['browser_version', 'text'], ['os', 'text'], ['os_version', 'text'], ['device', 'text'],
    ['screen_width', 'integer'], ['is_entry', 'integer'], ['source', 'text'],
  ],
  filters: [],
};

export const AI_FETCHES: ExportTable = {
  table: 'ai_fetches',
  label: 'ai-fetches',
  rowId: 'fetch_id',
  columns: [
    ['ts', 'time'], ['fetch_id', 'uuid'], ['path', 'text'], ['url', 'text'], ['status_code', 'integer'], ['content_type', 'text'],
    ['response_time_ms', 'integer'], ['bytes', 'int64'], ['user_agent', 'text'], ['assistant_name', 'text'],
    ['assistant_family', 'text'], ['assistant_category', 'text'], ['resource_type', 'text'],
  ],
  filters: ['assistant_name', 'assistant_family', 'resource_type'],
};

const JSON_SHAPES: Record<ColumnKind, () => TSchema> = {
  time: () => DateTime,
  uuid: () => Uuid,
  text: () => Type.String(),
  integer: () => Type.Integer({ minimum: 0 }),
  // 64-bit integers are JSON strings in every Plumb answer: as numbers they would lose digits.
  int64: () => Type.String({ pattern: '^[0-9]+$' }),
};

/** One row of a json/ndjson export of the table. */
export const rowSchema = (table: ExportTable) =>
  object(Object.fromEntries(table.columns.map(([name, kind]) => [name, JSON_SHAPES[kind]()])), { description: `One row of ${table.table}` });
