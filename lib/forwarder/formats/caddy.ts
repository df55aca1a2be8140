// Caddy's JSON access log, one object per line (the `json` encoder of the `log` directive):
//   {"ts":1767225600.123,"logger":"http.log.access","request":{"uri":"/docs","headers":{"User-Agent":["…"]}},
//    "duration":0.0012,"size":5120,"status":200,"resp_headers":{"Content-Type":["text/html"]}}
// `ts` is Unix seconds by default (the encoder's time_format may make it milliseconds,
// nanoseconds, or an ISO 8601 string); `duration` seconds by default, or a Go duration string.
import { IGNORED, isHttpStatus, jsonObject, type LineParser, type LineResult, MALFORMED, targetFields } from './line.ts';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A header of Caddy's map (canonical names, each a list of values), whatever the case. */
function header(headers: unknown, name: string): string | undefined {
  if (!isObject(headers)) return undefined;
  for (const [key, values] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    const first = Array.isArray(values) ? values[0] : values;
    return typeof first === 'string' ? first : undefined;
  }
  return undefined;
}

/** An epoch number in the unit its size says (s, ms, µs, ns up to year 5138), or an ISO 8601 string. */
export function caddyTime(ts: unknown): string | null {
  let ms: number;
  if (typeof ts === 'number' && Number.isFinite(ts) && ts > 0) {
    ms = ts < 1e11 ? ts * 1000 : ts < 1e14 ? ts : ts < 1e17 ? ts / 1000 : ts / 1e6;
  } else if (typeof ts === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(ts)) {
    // Go's iso8601 layout writes the offset without a colon (+0000).
    ms = Date.parse(ts.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  } else {
    return null;
  }
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

const GO_DURATION_UNITS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, μs: 0.001, ns: 0.000001 };

/** Seconds as a number, or a Go duration (`1.5ms`, `2m3.1s`), in whole milliseconds. */
export function caddyDurationMs(duration: unknown): number | undefined {
  if (typeof duration === 'number') return Number.isFinite(duration) && duration >= 0 ? Math.round(duration * 1000) : undefined;
  if (typeof duration !== 'string' || !/^(?:\d+(?:\.\d+)?(?:h|m|s|ms|us|µs|μs|ns))+$/.test(duration)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|μs|ns)/g)) ms += Number(amount) * GO_DURATION_UNITS[unit];
  return Math.round(ms);
}

export function caddyParser(): LineParser {
  return {
    parse(line: string): LineResult {
      if (line.trim() === '') return IGNORED;
      const entry = jsonObject(line) as Json | undefined;
      if (!entry) return MALFORMED;
      // Caddy's other loggers (start-up, TLS) share the file when pointed at it: not requests.
      if (!isObject(entry.request)) return IGNORED;
      const { uri, headers } = entry.request;
      const target = typeof uri === 'string' ? targetFields(uri) : null;
      const userAgent = header(headers, 'user-agent');
      const timestamp = caddyTime(entry.ts);
      const status = entry.status;
      if (!target || userAgent === undefined || !timestamp || typeof status !== 'number' || !isHttpStatus(status)) return MALFORMED;
      const fetch: LineResult & { kind: 'fetch' } = { kind: 'fetch', fetch: { ...target, status_code: status, user_agent: userAgent, timestamp } };
      if (typeof entry.size === 'number' && Number.isSafeInteger(entry.size) && entry.size >= 0) fetch.fetch.bytes = entry.size;
      const durationMs = caddyDurationMs(entry.duration);
      if (durationMs !== undefined) fetch.fetch.response_time_ms = durationMs;
      const contentType = header(entry.resp_headers, 'content-type');
      if (contentType) fetch.fetch.content_type = contentType;
      return fetch;
    },
  };
}
