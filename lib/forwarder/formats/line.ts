// What a log format's parser gives for one line, and the rules every format shares.
import type { AiFetch } from '../../ingest/schemas.ts';

/** A request line's fetch; a line that is no request (a header, a blank line, another logger's); or one that cannot be read. */
export type LineResult = { kind: 'fetch'; fetch: AiFetch } | { kind: 'ignored' } | { kind: 'malformed' };

export interface LineParser {
  parse(line: string): LineResult;
  /**
   * The header lines (`#…`) of a file, when reading resumes past them: a CloudFront file names its
   * columns only in its first lines.
   */
  header?(line: string): void;
}

export const MALFORMED: LineResult = { kind: 'malformed' };
export const IGNORED: LineResult = { kind: 'ignored' };

/** A request target as the ingest route takes it: a path, or an absolute URL (a proxy's request line). */
export function targetFields(target: string): Pick<AiFetch, 'path' | 'url'> | null {
  if (target.startsWith('/')) return { path: target };
  if (/^https?:\/\//i.test(target)) return { url: target };
  return null;
}

/** HTTP statuses the route takes; Caddy logs 0 for a connection closed before any answer. */
export const isHttpStatus = (status: number) => Number.isInteger(status) && status >= 100 && status <= 599;

/** A JSON-lines entry as an object; undefined for a line that is not one JSON object. */
export function jsonObject(line: string): Record<string, unknown> | undefined {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return undefined;
  }
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? (entry as Record<string, unknown>) : undefined;
}
