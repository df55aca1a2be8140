// CloudFront standard logs (legacy and v2 in the W3C format): tab-separated values under a
// `#Fields:` header that names the columns, `-` for an empty value, the user agent URL-encoded.
// The columns read: date, time (UTC), cs-uri-stem, sc-status, sc-bytes, cs(User-Agent),
// time-taken (seconds), sc-content-type. A file whose header was not seen (reading resumed past
// it, or a file cut from the middle of a log) is read with the standard columns' order.
import { IGNORED, isHttpStatus, type LineParser, type LineResult, MALFORMED, targetFields } from './line.ts';

/** The columns of a standard log, in the order CloudFront documents and writes them by default. */
export const CLOUDFRONT_STANDARD_FIELDS = [
  'date', 'time', 'x-edge-location', 'sc-bytes', 'c-ip', 'cs-method', 'cs(Host)', 'cs-uri-stem', 'sc-status', 'cs(Referer)',
  'cs(User-Agent)', 'cs-uri-query', 'cs(Cookie)', 'x-edge-result-type', 'x-edge-request-id', 'x-host-header', 'cs-protocol',
  'cs-bytes', 'time-taken', 'x-forwarded-for', 'ssl-protocol', 'ssl-cipher', 'x-edge-response-result-type', 'cs-protocol-version',
  'fle-status', 'fle-encrypted-fields', 'c-port', 'time-to-first-byte', 'x-edge-detailed-result-type', 'sc-content-type',
  'sc-content-len', 'sc-range-start', 'sc-range-end',
];

/** Decodes %XX runs that form UTF-8, leaving any other `%` as written. */
export function urlDecoded(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

export function cloudFrontParser(): LineParser {
  let columns = new Map(CLOUDFRONT_STANDARD_FIELDS.map((name, index) => [name, index]));
  const header = (line: string) => {
    const fields = /^#Fields:\s*(.*)$/.exec(line.trim());
    if (fields) columns = new Map(fields[1].split(/\s+/).map((name, index) => [name, index]));
  };
  return {
    header,
    parse(line: string): LineResult {
      if (line.startsWith('#')) {
        header(line);
        return IGNORED;
      }
      if (line.trim() === '') return IGNORED;
      const values = line.replace(/\r$/, '').split('\t');
      const value = (name: string) => {
        const index = columns.get(name);
        const found = index === undefined ? undefined : values[index];
        return found === undefined || found === '-' ? undefined : found;
      };
      const [date, time, stem, status, userAgent] = [value('date'), value('time'), value('cs-uri-stem'), Number(value('sc-status')), value('cs(User-Agent)')];
      const at = date && time && /^\d{4}-\d{2}-\d{2}$/.test(date) && /^\d{2}:\d{2}:\d{2}(?:\.\d+)?$/.test(time) ? Date.parse(`${date}T${time}Z`) : Number.NaN;
      const target = stem ? targetFields(stem) : null;
      if (Number.isNaN(at) || !target || !isHttpStatus(status) || userAgent === undefined) return MALFORMED;
      const fetch: LineResult & { kind: 'fetch' } = {
        kind: 'fetch',
        fetch: { ...target, status_code: status, user_agent: urlDecoded(userAgent), timestamp: new Date(at).toISOString() },
      };
      const bytes = Number(value('sc-bytes'));
      if (Number.isSafeInteger(bytes) && bytes >= 0) fetch.fetch.bytes = bytes;
      const seconds = Number(value('time-taken'));
      if (value('time-taken') !== undefined && Number.isFinite(seconds) && seconds >= 0) fetch.fetch.response_time_ms = Math.round(seconds * 1000);
      const contentType = value('sc-content-type');
      if (contentType) fetch.fetch.content_type = urlDecoded(contentType);
      return fetch;
    },
  };
}
