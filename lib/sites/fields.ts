// The formats of a site's fields (domain, time zone, extra hostnames) as fastest-validator rules
// with their own checks and plain messages, so a create or change names every bad field in one
// 400 together with the rest of its params. lib/sites/sites-admin.ts applies the same checks to
// what it stores.
import { normaliseHostname } from './hostname.ts';

/** fastest-validator's custom check (the newer signature Moleculer turns on): returns the value, pushes issues. */
type Check = (value: unknown, errors: { type: string; field?: string }[], schema?: unknown, path?: string) => unknown;

export const MAX_HOSTNAMES = 50;

export const DOMAIN_MESSAGE = 'must be a domain name such as example.com (no scheme, port or path)';
export const HOSTNAME_MESSAGE = 'must be a hostname such as shop.example.com (no scheme, port or path)';
export const TIME_ZONE_MESSAGE = 'must be an IANA time zone such as Europe/Berlin or UTC';

/**
 * IANA names as this runtime's ICU knows them. ICU lists canonical zones only and leaves out
 * "UTC" itself, so an alias ICU resolves to a listed zone (Europe/Kyiv, utc) is stored in its
 * canonical spelling, which ClickHouse knows too. Null when it is no zone.
 */
const ZONES = new Set(Intl.supportedValuesOf('timeZone'));
export function canonicalTimeZone(zone: string): string | null {
  if (zone === 'UTC' || ZONES.has(zone)) return zone;
  try {
    const canonical = new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone;
    if (canonical === 'UTC' || ZONES.has(canonical)) return canonical;
  } catch {
    // Not a zone at all.
  }
  return null;
}

/** A string rule whose own check runs once the type and length rules are met. */
function checkedString(max: number, type: string, message: string, test: (value: string) => boolean, optional: boolean) {
  const custom: Check = (value, errors) => {
    if (typeof value === 'string' && value.length >= 1 && value.length <= max && !test(value)) errors.push({ type });
    return value;
  };
  return { type: 'string', min: 1, max, optional, messages: { [type]: `{field} ${message}` }, custom };
}

export const siteDomain = (options: { optional?: boolean } = {}) => ({
  ...checkedString(253, 'siteDomain', DOMAIN_MESSAGE, (value) => normaliseHostname(value) !== null, options.optional === true),
  trim: true,
});

export const timeZone = () => checkedString(64, 'timeZone', TIME_ZONE_MESSAGE, (value) => canonicalTimeZone(value) !== null, true);

/**
 * Further hostnames of a site; each bad one is named by its place (`hostnames[2]`). The check sits
 * on the list, since a check on its items is not told their index.
 */
export const extraHostnames = () => {
  const custom: Check = (value, errors, _schema, path) => {
    if (!Array.isArray(value)) return value;
    value.forEach((item, index) => {
      if (typeof item === 'string' && item.length >= 1 && item.length <= 253 && normaliseHostname(item) === null) errors.push({ type: 'siteHostname', field: `${path}[${index}]` });
    });
    return value;
  };
  return {
    type: 'array',
    max: MAX_HOSTNAMES,
    optional: true,
    items: { type: 'string', min: 1, max: 253 },
    messages: { siteHostname: `{field} ${HOSTNAME_MESSAGE}` },
    custom,
  };
};
