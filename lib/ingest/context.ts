// Turns one accepted hit into the columns every analytics row shares: who (cookieless visitor and
// session ids), where from (referrer, channel, UTM), on what (browser, OS, device) and where
// (country). The raw IP is used for the hash and the country only; it is never stored.
import { randomUUID } from 'node:crypto';
import type { Eventually } from '../eventually.ts';
import type { Site } from '../sites/sites.ts';
import type { GeoLookup } from './enrich/geo.ts';
import { classifyReferrer } from './enrich/referrer.ts';
import type { PageUrl } from './enrich/url.ts';
import { parseUserAgent } from './enrich/user-agent.ts';
import { visitorHash } from './enrich/visitor.ts';
import type { SaltRing } from './salts.ts';
import type { VisitHandle, VisitTracker } from './visit-tracker.ts';

export interface IdentityDeps {
  geo: GeoLookup;
  salts: SaltRing;
  visits: VisitTracker;
}

export interface HitInput {
  site: Site;
  /** The page URL, parsed once by the caller (which checks it belongs to the site). */
  page: PageUrl;
  referrer?: string;
  userAgent: string;
  ip: string;
  width?: number;
  at: Date;
  /** A server-side caller's own visit key (its `session_id`), used instead of the visitor's idle timeout. */
  clientVisitKey?: string;
}

/** The columns every row of a hit shares. */
export interface VisitColumns {
  ts: string;
  site_id: string;
  session_id: string;
  visitor_id: string;
  path: string;
  hostname: string;
  referrer: string;
  referrer_source: string;
  channel: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  country: string;
  region: string;
  browser: string;
  os: string;
  device: string;
}

export interface Visit {
  columns: VisitColumns;
  isEntry: boolean;
  /** Only pageviews keep versions; events group by browser and OS name. */
  versions: { browser_version: string; os_version: string };
  /** The visitor's visit, which this hit extends: ended if the hit cannot be stored. */
  visit: VisitHandle;
}

/** ECMAScript's time range: ±100,000,000 days from 1970. */
const MAX_TIME_MS = 8.64e15;
/** The second isoTimestamp last formatted, and its text up to the milliseconds (`2026-11-30T01:25:47.`). */
let formattedSecond = Number.NaN;
let secondPrefix = '';

/**
 * `new Date(ms).toISOString()` for every hit a node stamps: Date's formatter is a call into C++
 * each time (~240 ns here), this one joins three strings (~12 ns) and formats once a second.
 */
export function isoTimestamp(ms: number): string {
  if (!(Math.abs(ms) <= MAX_TIME_MS)) throw new RangeError('Invalid time value');
  const second = Math.floor(ms / 1000);
  if (second !== formattedSecond) {
    const text = new Date(second * 1000).toISOString();
    secondPrefix = text.slice(0, text.length - 4);
    formattedSecond = second;
  }
  const millis = ms - second * 1000;
  return `${secondPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

// The rows below name every property rather than spread another object into them. After a spread,
// V8 defines each later property through a call site that turns generic as soon as it meets a
// second shape, and a row's shapes are built anew after every full garbage collection that finds
// no row alive: then each property costs a call into V8's runtime (~1.3k instructions), ~12k a
// pageview. A literal with named properties starts from one shape V8 keeps with the literal, which
// is why the hit and event rows repeat the columns they share.

/** A hit's visit and the columns its rows share: at hand once the day's salt is (eventually.ts). */
export function visitColumns(deps: IdentityDeps, hit: HitInput): Eventually<Visit> {
  const salt = deps.salts.forTime(hit.at);
  return salt instanceof Promise ? salt.then((loaded) => visitWithSalt(deps, hit, loaded)) : visitWithSalt(deps, hit, salt);
}

function visitWithSalt(deps: IdentityDeps, hit: HitInput, salt: Uint8Array): Visit {
  const { page } = hit;
  const { utm } = page;
  const visitorId = visitorHash(salt, hit.site.id, hit.ip, hit.userAgent);
  // A visitor id is a hash over the site already; a client's own visit key is only unique within its site.
  const touched = deps.visits.touch(hit.clientVisitKey ? `${hit.site.id}\0${hit.clientVisitKey}` : visitorId, hit.at.getTime());
  const agent = parseUserAgent(hit.userAgent, hit.width);
  const referrer = classifyReferrer(hit.referrer, page.hostname, page.utm.utm_source, page.utm.utm_medium);
  const place = deps.geo.lookup(hit.ip);
  return {
    isEntry: touched.isEntry,
    visit: touched.visit,
    versions: { browser_version: agent.browser_version, os_version: agent.os_version },
    columns: {
      ts: isoTimestamp(hit.at.getTime()),
      site_id: hit.site.id,
      session_id: touched.visitId,
      visitor_id: visitorId,
      path: page.path,
      hostname: page.hostname,
      referrer: referrer.referrer,
      referrer_source: referrer.source_name,
      channel: referrer.referrer_source,
      utm_source: utm.utm_source,
      utm_medium: utm.utm_medium,
      utm_campaign: utm.utm_campaign,
      utm_term: utm.utm_term,
      utm_content: utm.utm_content,
      country: place.country,
      region: place.region,
      browser: agent.browser,
      os: agent.os,
      device: agent.device,
    },
  };
}

export function hitRow(visit: Visit, input: { width?: number; source: string }) {
  const { columns, versions } = visit;
  return {
    ts: columns.ts,
    site_id: columns.site_id,
    session_id: columns.session_id,
    visitor_id: columns.visitor_id,
    path: columns.path,
    hostname: columns.hostname,
    referrer: columns.referrer,
    referrer_source: columns.referrer_source,
    channel: columns.channel,
    utm_source: columns.utm_source,
    utm_medium: columns.utm_medium,
    utm_campaign: columns.utm_campaign,
    utm_term: columns.utm_term,
    utm_content: columns.utm_content,
    country: columns.country,
    region: columns.region,
    browser: columns.browser,
    os: columns.os,
    device: columns.device,
    browser_version: versions.browser_version,
    os_version: versions.os_version,
    hit_id: randomUUID(),
    screen_width: input.width ?? 0,
    engagement_ms: 0,
    is_entry: visit.isEntry ? 1 : 0,
    source: input.source,
  };
}

export function eventRow(visit: Visit, input: { name: string; props?: Record<string, string | number | boolean>; source: string }) {
  const props: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.props ?? {})) props[key] = String(value);
  const { columns } = visit;
  return {
    ts: columns.ts,
    site_id: columns.site_id,
    session_id: columns.session_id,
    visitor_id: columns.visitor_id,
    path: columns.path,
    hostname: columns.hostname,
    referrer: columns.referrer,
    referrer_source: columns.referrer_source,
    channel: columns.channel,
    utm_source: columns.utm_source,
    utm_medium: columns.utm_medium,
    utm_campaign: columns.utm_campaign,
    utm_term: columns.utm_term,
    utm_content: columns.utm_content,
    country: columns.country,
    region: columns.region,
    browser: columns.browser,
    os: columns.os,
    device: columns.device,
    event_id: randomUUID(),
    name: input.name,
    props,
    revenue: null,
    source: input.source,
  };
}
