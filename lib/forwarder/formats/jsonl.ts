// JSON lines with the ingest route's own field names, one fetch per line: for logs a site's own
// code writes, or a pipeline (Vector, Fluent Bit) reshapes into Plumb's fields.
//   {"path":"/docs","status_code":200,"user_agent":"… GPTBot/1.2 …","timestamp":"2026-01-10T10:00:00Z","bytes":5120}
import type { AiFetch } from '../../ingest/schemas.ts';
import { IGNORED, jsonObject, type LineParser, type LineResult, MALFORMED } from './line.ts';

const FIELDS = ['path', 'url', 'status_code', 'content_type', 'response_time_ms', 'bytes', 'user_agent', 'timestamp'] as const;

export function jsonLinesParser(): LineParser {
  return {
    parse(line: string): LineResult {
      if (line.trim() === '') return IGNORED;
      const record = jsonObject(line);
      if (!record) return MALFORMED;
      if (typeof record.user_agent !== 'string') return MALFORMED;
      // Only the route's fields travel; their values are the server's to judge, item by item.
      const fetch: Record<string, unknown> = {};
      for (const field of FIELDS) if (record[field] !== undefined) fetch[field] = record[field];
      return { kind: 'fetch', fetch: fetch as AiFetch };
    },
  };
}
