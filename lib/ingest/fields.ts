// The formats of ingest fields (URLs, IP addresses, timestamps, event names, properties) as
// fastest-validator rules with their own checks and plain messages, so the gateway's one validation
// pass names every malformed field at once and OpenAPI documents the format. The checks run on the
// tracker's hot path: compiled regular expressions and no allocation unless a field is bad.
import { isIP } from 'node:net';
import { BoundedCache } from './enrich/cache.ts';

/** An issue as a fastest-validator custom check reports it (`field` overrides the checked field). */
interface CheckIssue {
  type: string;
  field?: string;
  expected?: unknown;
  actual?: unknown;
}

/**
 * fastest-validator's custom check (Moleculer turns on its newer signature): returns the value,
 * pushes issues. `context.data` is the whole object checked: ingest fields are all top-level, and
 * `parent` is not the field's object inside an object rule.
 */
type Check = (value: unknown, errors: CheckIssue[], schema: unknown, path: string, parent: unknown, context: { data?: unknown }) => unknown;

/** A sibling field of the checked one. */
const sibling = (context: { data?: unknown }, name: string) =>
  typeof context.data === 'object' && context.data !== null ? (context.data as Record<string, unknown>)[name] : undefined;

/** Control characters (C0, DEL, C1: Unicode's Cc): never part of a name, URL, key or header value. */
const CONTROL = /\p{Cc}/u;
/** The same, but a text value may hold tabs and line breaks. */
const CONTROL_IN_TEXT = /(?![\t\n\r])\p{Cc}/u;
const HTTP_PREFIX = /^https?:\/\/./i;
const SCHEME_PREFIX = /^[a-z][a-z0-9+.-]*:/i;
/** One leading slash: `//host/x` would be read as another host. */
const REQUEST_PATH = /^\/(?!\/)[^\s\p{Cc}]*$/u;

/** Timestamps as RFC 3339 writes them: date, `T`, time, optional fraction, `Z` or an offset. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
/**
 * Server ingest replays history (imports, queued events), so any time since 2000 is accepted; a
 * clock a little ahead is tolerated, data from further in the future is refused.
 */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;
export const OLDEST_TIMESTAMP = Date.UTC(2000, 0, 1);

export const MAX_PROPERTIES = 30;
export const PROPERTY_KEY_MAX = 64;
export const PROPERTY_VALUE_MAX = 256;

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * Why a timestamp is refused, or null when it is a real RFC 3339 date-time within the accepted
 * window. JavaScript's parser alone would take 2026-02-30 (as 2 March) and 24:00.
 */
export function timestampProblem(value: string, now: number): 'dateTime' | 'dateTimeFuture' | 'dateTimePast' | null {
  const m = RFC3339.exec(value);
  if (!m) return 'dateTime';
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return 'dateTime';
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return 'dateTime';
  const at = Date.parse(value);
  if (Number.isNaN(at)) return 'dateTime';
  if (at > now + FUTURE_TOLERANCE_MS) return 'dateTimeFuture';
  if (at < OLDEST_TIMESTAMP) return 'dateTimePast';
  return null;
}

/** Answers of isHttpUrl: every tracker hit sends its page's URL, and a site's visitors send the same few (URLs of up to 512 characters). */
const httpUrls = new BoundedCache<boolean>(2000, 512);

/** An absolute http(s) URL the WHATWG parser accepts as written (it would silently drop tabs and newlines). */
export function isHttpUrl(value: string): boolean {
  return httpUrls.getOrMake(value, checkHttpUrl);
}

const checkHttpUrl = (value: string) => HTTP_PREFIX.test(value) && !CONTROL.test(value) && URL.canParse(value);

/** Answers of isReferrerUrl: most visits come from the same few search engines, sites and apps. */
const referrerUrls = new BoundedCache<boolean>(2000, 512);

/** Empty, or an absolute URL of any scheme the WHATWG parser accepts as written (apps refer as android-app://…). */
export function isReferrerUrl(value: string): boolean {
  return value === '' || referrerUrls.getOrMake(value, checkReferrerUrl);
}

const checkReferrerUrl = (value: string) => SCHEME_PREFIX.test(value) && !CONTROL.test(value) && URL.canParse(value);

const withinLength = (value: unknown, min: number, max: number): value is string => typeof value === 'string' && value.length >= min && value.length <= max;

/** A string rule whose own check runs only on strings of a length it allows (the type and length rules speak otherwise). */
function checkedString(
  length: { min: number; max: number },
  type: string,
  message: string,
  test: (value: string) => boolean,
  extra: Record<string, unknown> = {},
) {
  const custom: Check = (value, errors) => {
    if (withinLength(value, length.min, length.max) && !test(value)) errors.push({ type, actual: value });
    return value;
  };
  return { type: 'string', ...length, ...extra, messages: { [type]: message }, custom };
}

/** An absolute http(s) URL of a page. */
export const httpUrl = (options: { optional?: boolean } = {}) =>
  checkedString({ min: 1, max: 2048 }, 'httpUrl', '{field} must be an absolute http(s) URL', isHttpUrl, { format: 'uri', optional: options.optional === true });

/** A referrer: empty, or an absolute URL of any scheme (apps refer as android-app://…). */
export const referrerUrl = () =>
  checkedString({ min: 0, max: 2048 }, 'referrerUrl', '{field} must be empty or an absolute URL', isReferrerUrl, {
    optional: true,
    format: 'uri',
  });

export const ipAddress = () =>
  checkedString({ min: 1, max: 64 }, 'ipAddress', '{field} must be an IPv4 or IPv6 address', (value) => isIP(value) !== 0, { format: 'ip', description: 'IPv4 or IPv6 address of the visitor' });

/** Text without control characters: user agents, session ids, content types. */
export const plainText = (max: number, options: { min?: number; optional?: boolean } = {}) =>
  checkedString({ min: options.min ?? 0, max }, 'plainText', '{field} must not contain control characters', (value) => !CONTROL.test(value), { optional: options.optional === true });

export const timestamp = (options: { optional?: boolean } = {}) => {
  const custom: Check = (value, errors) => {
    if (typeof value === 'string') {
      const problem = timestampProblem(value, Date.now());
      if (problem) errors.push({ type: problem, actual: value });
    }
    return value;
  };
  return {
    type: 'string',
    format: 'date-time',
    optional: options.optional === true,
    description: 'RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z; from 2000 up to 5 minutes ahead',
    messages: {
      dateTime: '{field} must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z',
      dateTimeFuture: '{field} is more than 5 minutes in the future',
      dateTimePast: '{field} is before 2000-01-01',
    },
    custom,
  };
};

/**
 * An event name: 1 to 120 characters, not blank, no control characters. Names starting with `$`
 * are Plumb's own: the tracker may send `$engagement` (with engagement_ms), nobody anything else.
 */
export function eventName(options: { engagement: boolean; optional?: boolean }) {
  const custom: Check = (value, errors, _schema, _path, _parent, context) => {
    if (!withinLength(value, 1, 120)) return value;
    if (value.trim() === '') errors.push({ type: 'eventNameBlank' });
    else if (CONTROL.test(value)) errors.push({ type: 'plainText' });
    else if (value.charCodeAt(0) === 36 /* $ */) {
      if (!options.engagement || value !== '$engagement') errors.push({ type: 'eventNameReserved', actual: value });
      else if (sibling(context, 'engagement_ms') === undefined) errors.push({ type: 'engagementMs', field: 'engagement_ms' });
    }
    return value;
  };
  return {
    type: 'string',
    min: 1,
    max: 120,
    optional: options.optional === true,
    messages: {
      eventNameBlank: '{field} must not be blank',
      plainText: '{field} must not contain control characters',
      eventNameReserved: '{field} must not start with $ (names starting with $ are reserved)',
      engagementMs: 'engagement_ms is required with the $engagement event',
    },
    custom,
  };
}

const propertyValueOk = (value: unknown) =>
  typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= PROPERTY_VALUE_MAX && !CONTROL_IN_TEXT.test(value));

/**
 * Custom-event properties: at most 30, keys of 1 to 64 characters without control characters,
 * values strings (at most 256 characters; tabs and line breaks allowed), numbers or booleans.
 * One check for the whole record, so each bad property is named once, as `props.<key>`.
 */
export function eventProperties() {
  const custom: Check = (value, errors, _schema, path) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    let count = 0;
    for (const key in value) {
      count++;
      const field = `${path}.${key}`;
      if (key.length === 0 || key.length > PROPERTY_KEY_MAX || CONTROL.test(key)) errors.push({ type: 'propertyKey', field });
      else if (!propertyValueOk((value as Record<string, unknown>)[key])) errors.push({ type: 'propertyValue', field });
    }
    if (count > MAX_PROPERTIES) errors.push({ type: 'propertyCount', expected: MAX_PROPERTIES, actual: count });
    return value;
  };
  return {
    type: 'record',
    optional: true,
    key: { type: 'string' },
    value: { type: 'any', description: `a string (at most ${PROPERTY_VALUE_MAX} characters), a number or a boolean` },
    description: `at most ${MAX_PROPERTIES} properties; keys of 1 to ${PROPERTY_KEY_MAX} characters`,
    messages: {
      propertyKey: `{field}: property names must be 1 to ${PROPERTY_KEY_MAX} characters without control characters`,
      propertyValue: `{field} must be a string of at most ${PROPERTY_VALUE_MAX} characters without control characters, a number or a boolean`,
      propertyCount: `{field} may hold at most ${MAX_PROPERTIES} properties, not {actual}`,
    },
    custom,
  };
}

/** A server-log path: starts with one `/` (a URL goes in `url`), no whitespace or control characters. */
export const requestPath = () =>
  checkedString({ min: 1, max: 2048 }, 'requestPath', '{field} must be a path starting with / (without spaces or control characters)', (value) => REQUEST_PATH.test(value), { optional: true });

/** A batch item's `type`; an event needs its name (the item's schema cannot say "required if"). */
export const batchItemType = () => {
  const custom: Check = (value, errors, _schema, _path, _parent, context) => {
    if (value === 'event' && sibling(context, 'name') === undefined) errors.push({ type: 'eventNameRequired', field: 'name' });
    return value;
  };
  return { type: 'enum', values: ['pageview', 'event'], messages: { eventNameRequired: 'name is required when type is event' }, custom };
};
