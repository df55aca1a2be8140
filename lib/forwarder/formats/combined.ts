// The combined log format of nginx and Apache:
//   $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"
// optionally followed by the response time and the response's content type (README: nginx's
// `$request_time "$sent_http_content_type"`, in seconds; Apache's `%D "%{Content-Type}o"`, in
// microseconds). Anything else after the user agent (nginx's "main" adds X-Forwarded-For) is
// left alone.
import { IGNORED, type LineParser, type LineResult, MALFORMED, isHttpStatus, targetFields } from './line.ts';

const QUOTED = String.raw`"((?:[^"\\]|\\.)*)"`;
const LINE = new RegExp(String.raw`^\S+ \S+ .*? \[([^\]]+)\] ${QUOTED} (\d{3}) (\d+|-) ${QUOTED} ${QUOTED}(.*)$`);
const EXTRAS = new RegExp(String.raw`^ +(\d+(?:\.\d+)?|-)(?: +${QUOTED})?`);
const TIME_LOCAL = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * A quoted field as the server wrote it: nginx writes `"`, `\` and bytes outside printable ASCII
 * as \xHH (a UTF-8 character as several), Apache `\"` and `\\`.
 */
export function unescapeField(text: string): string {
  return text.replace(/((?:\\x[0-9A-Fa-f]{2})+)|\\(["\\])/g, (_, bytes: string | undefined, char: string | undefined) =>
    bytes ? Buffer.from(bytes.replace(/\\x/g, ''), 'hex').toString('utf8') : (char as string),
  );
}

/** `10/Oct/2026:13:55:36 -0700` as RFC 3339 UTC, or null. */
export function timeLocal(text: string): string | null {
  const m = TIME_LOCAL.exec(text);
  if (!m) return null;
  const month = MONTHS.indexOf(m[2]);
  if (month < 0) return null;
  const [day, year, hour, minute, second] = [m[1], m[3], m[4], m[5], m[6]].map(Number);
  const offsetMinutes = (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9]));
  const utc = Date.UTC(year, month, day, hour, minute, second) - offsetMinutes * 60_000;
  const date = new Date(utc);
  // Date.UTC rolls 31/Feb over into March; a real log never writes it.
  if (Number.isNaN(utc) || new Date(Date.UTC(year, month, day)).getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return null;
  return date.toISOString();
}

export function combinedParser(responseTimeUnit: 'seconds' | 'microseconds'): LineParser {
  return {
    parse(line: string): LineResult {
      if (line.trim() === '') return IGNORED;
      const m = LINE.exec(line);
      if (!m) return MALFORMED;
      const [, time, request, status, bytes, , userAgent, rest] = m;
      const timestamp = timeLocal(time);
      // "GET /path HTTP/1.1"; HTTP/0.9 has no protocol.
      const parts = unescapeField(request).split(' ');
      const target = parts.length === 2 || parts.length === 3 ? targetFields(parts[1]) : null;
      const statusCode = Number(status);
      if (!timestamp || !target || !isHttpStatus(statusCode)) return MALFORMED;
      const fetch: LineResult & { kind: 'fetch' } = {
        kind: 'fetch',
        fetch: { ...target, status_code: statusCode, bytes: bytes === '-' ? 0 : Number(bytes), user_agent: unescapeField(userAgent), timestamp },
      };
      const extras = EXTRAS.exec(rest);
      if (extras) {
        if (extras[1] !== '-') fetch.fetch.response_time_ms = Math.round(Number(extras[1]) * (responseTimeUnit === 'seconds' ? 1000 : 0.001));
        const contentType = extras[2] === undefined ? '' : unescapeField(extras[2]);
        if (contentType !== '' && contentType !== '-') fetch.fetch.content_type = contentType;
      }
      return fetch;
    },
  };
}
