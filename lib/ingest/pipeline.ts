// The ingest use cases: validate → resolve site → bot filter → enrich → append to the durable
// journal. Every function resolves only once its rows are on disk, so a 202 is a promise kept.
import type { ApiClientPrincipal } from '../auth/api-clients.ts';
import { requireClientAccess } from '../auth/api-clients.ts';
import { type FieldError, PlumbError, unavailable, validationFailed } from '../errors.ts';
import { hostnameOfUrl } from '../sites/hostname.ts';
import type { Eventually } from '../eventually.ts';
import type { Site, SiteDirectory } from '../sites/sites.ts';
import { compileChecker } from '../validation.ts';
import { eventRow, hitRow, type IdentityDeps, type Visit, visitColumns } from './context.ts';
import { BoundedCache } from './enrich/cache.ts';
import { isBotRequest } from './enrich/bots.ts';
import { type PageUrl, parsePageUrl } from './enrich/url.ts';
import { type Journal, JournalFullError } from './journal.ts';
import type { RejectionCounter } from './rejections.ts';
import { SERVER_BATCH_ITEM, type ServerBatchItem, type ServerEvent, type ServerPageview, type TrackerEvent, type TrackerPageview, type TrackerWebVital } from './schemas.ts';

export type AnalyticsTable = 'hits' | 'events' | 'web_vitals' | 'ai_fetches' | 'visits';

/** One row on its way to the analytics store. */
export interface JournalRecord {
  table: AnalyticsTable;
  /** The team whose tenant database receives the row. */
  team: string;
  row: Record<string, unknown>;
  /**
   * Set on the hits and events whose visit the ingest writer derives from them (lib/ingest/visit-states.ts).
   * Journals of earlier versions carry each visit's rows beside its hits instead (table `visits`).
   */
  derivesVisit?: true;
}

export interface RequestInfo {
  ip: string;
  userAgent: string;
  origin?: string;
  referer?: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface IngestDeps extends IdentityDeps {
  /** The durable path (lib/ingest/sink.ts): the journal, JetStream, or the leader in a cluster. */
  journal: Pick<Journal<JournalRecord>, 'append'>;
  sites: SiteDirectory;
  rejections: RejectionCounter;
  /** Called after records are durable, with how many items (pageviews, events, vitals, fetches) they hold. */
  appended(items: number): void;
  now?: () => Date;
}

export type ItemStatus = 'accepted' | 'filtered';


/**
 * Appends records to the durable path. `visits` are the visits the records extend: if the append
 * fails those visits end, so the visitor's next hit starts a visit of its own with its entry page.
 */
export async function append(deps: IngestDeps, records: JournalRecord[], visits: readonly Visit['visit'][] = []): Promise<void> {
  try {
    await deps.journal.append(records);
  } catch (err) {
    for (const visit of visits) visit.abandon();
    if (err instanceof JournalFullError) throw unavailable('Ingest buffer is full; retry shortly', err.retryAfterSeconds);
    throw err;
  }
  deps.appended(records.length);
}

/** The record of one pageview; the writer makes its visit's new state from it. */
const pageviewRecords = (site: Site, hit: Record<string, unknown>): JournalRecord[] => [{ table: 'hits', team: site.team_id, row: hit, derivesVisit: true }];

/** The record of one event; the writer adds `$engagement`'s time to its visit, and counts any other event. */
const eventRecords = (site: Site, event: Record<string, unknown>): JournalRecord[] => [{ table: 'events', team: site.team_id, row: event, derivesVisit: true }];

/** Hostnames of the Origin headers seen (a site's pages send one Origin): parsing it costs more than the rest of the lookup. */
const originHostnames = new BoundedCache<string | null>(1000);

/** The site a browser request belongs to, from its Origin (or Referer when a privacy tool drops Origin). */
export function siteOfBrowserRequest(deps: IngestDeps, request: RequestInfo): Eventually<Site> {
  const source = request.origin ?? request.referer;
  if (!source) throw new PlumbError(403, 'forbidden', 'An Origin header is required on tracker ingest');
  let hostname = request.origin === undefined ? undefined : originHostnames.get(request.origin);
  if (hostname === undefined) {
    hostname = hostnameOfUrl(source);
    if (request.origin !== undefined) originHostnames.set(request.origin, hostname);
  }
  if (!hostname) throw new PlumbError(403, 'forbidden', 'The Origin is not an http(s) site');
  const site = deps.sites.byHostname(hostname);
  return site instanceof Promise ? site.then((found) => registered(found, hostname)) : registered(site, hostname);
}

function registered(site: Site | null, hostname: string): Site {
  if (!site) throw new PlumbError(403, 'forbidden', `No site is registered for ${hostname}`);
  return site;
}

function botFiltered(deps: IngestDeps, site: Site, userAgent: string, headers?: RequestInfo['headers']): boolean {
  if (!isBotRequest(userAgent, headers)) return false;
  deps.rejections.count(site.id, 'bot');
  return true;
}

export const NOT_HTTP_URL = 'must be an absolute http(s) URL';
export const NOT_THE_SITES = "must be a page of the site's domain or one of its hostnames";
const urlRefused = (field: string, problem: string) => validationFailed([{ field, message: `${field} ${problem}` }]);
/** One answer for "no such site" and "not yours", so a token cannot probe which sites exist. */
export const noAccess = () => new PlumbError(403, 'forbidden', 'This token has no access to that site');

/** Whether a page's hostname is the site's domain or one of its extra hostnames (subdomains are sites of their own). */
export function isSitesHost(deps: IngestDeps, site: Site, hostname: string): Eventually<boolean> {
  if (hostname === site.domain) return true;
  const found = deps.sites.byHostname(hostname);
  return found instanceof Promise ? found.then((other) => other?.id === site.id) : found?.id === site.id;
}

/**
 * The page a tracker hit reports, which must be on the site the Origin resolved: the Origin only
 * proves which site sent the hit, so a `url` elsewhere would file another host's paths under it.
 */
function pageOfSite(deps: IngestDeps, site: Site, url: string): Eventually<PageUrl> {
  const page = parsePageUrl(url);
  if (!page) throw urlRefused('url', NOT_HTTP_URL);
  const onSite = isSitesHost(deps, site, page.hostname);
  return onSite instanceof Promise ? onSite.then((yes) => pageIfOnSite(page, yes)) : pageIfOnSite(page, onSite);
}

function pageIfOnSite(page: PageUrl, onSite: boolean): PageUrl {
  if (!onSite) throw urlRefused('url', NOT_THE_SITES);
  return page;
}

/** What the bodies of tracker hits share: the page, and the referrer and width when sent. */
interface TrackerHit {
  url: string;
  referrer?: string;
  width?: number;
}

/**
 * A tracker hit from a browser: its site (by the Origin), the bot filter, its page (on that site)
 * and its visit, then the records `recordsOf` makes appended. The lookups are awaited only when
 * they were not at hand (lib/eventually.ts), so a hit takes one step through the microtask queue,
 * its append. With `extendsVisit`, a failed append ends the visit (see append).
 */
async function trackerHit<Body extends TrackerHit>(
  deps: IngestDeps,
  body: Body,
  request: RequestInfo,
  recordsOf: (site: Site, visit: Visit, body: Body) => JournalRecord[],
  extendsVisit: boolean,
): Promise<ItemStatus> {
  const siteFound = siteOfBrowserRequest(deps, request);
  const site = siteFound instanceof Promise ? await siteFound : siteFound;
  if (botFiltered(deps, site, request.userAgent, request.headers)) return 'filtered';
  const pageFound = pageOfSite(deps, site, body.url);
  const page = pageFound instanceof Promise ? await pageFound : pageFound;
  const visitFound = visitColumns(deps, { site, page, referrer: body.referrer, userAgent: request.userAgent, ip: request.ip, width: body.width, at: now(deps) });
  const visit = visitFound instanceof Promise ? await visitFound : visitFound;
  await append(deps, recordsOf(site, visit, body), extendsVisit ? [visit.visit] : undefined);
  return 'accepted';
}

const trackerPageviewRecords = (site: Site, visit: Visit, body: TrackerPageview) => pageviewRecords(site, hitRow(visit, { width: body.width, source: 'tracker' }));

/** Reserved names (`$…`) and `$engagement` without its time are refused by the schema (./fields.ts). */
function trackerEventRecords(site: Site, visit: Visit, body: TrackerEvent): JournalRecord[] {
  const props = body.name === '$engagement' ? { engagement_ms: String(body.engagement_ms) } : body.props;
  return eventRecords(site, eventRow(visit, { name: body.name, props, source: 'tracker' }));
}

function webVitalRecords(site: Site, visit: Visit, body: TrackerWebVital): JournalRecord[] {
  const { ts, site_id, session_id, path, device, country } = visit.columns;
  const row = { ts, site_id, session_id, path, device, country, metric: body.metric, value: body.value, rating: body.rating ?? '' };
  return [{ table: 'web_vitals', team: site.team_id, row }];
}

export const trackerPageview = (deps: IngestDeps, body: TrackerPageview, request: RequestInfo) => trackerHit(deps, body, request, trackerPageviewRecords, true);
export const trackerEvent = (deps: IngestDeps, body: TrackerEvent, request: RequestInfo) => trackerHit(deps, body, request, trackerEventRecords, true);
/** A measurement of the page, not an action of the visitor's: a failed one leaves the visit running. */
export const trackerWebVital = (deps: IngestDeps, body: TrackerWebVital, request: RequestInfo) => trackerHit(deps, body, request, webVitalRecords, false);

/**
 * The journal records of one server-side pageview or event (with its visit's), or null when it is
 * a bot's. The schema has checked every field (timestamp window, IP, names: ./fields.ts); the site
 * is the one of the url's hostname, which the token must be allowed to write to.
 */
async function serverRecords(deps: IngestDeps, item: ServerBatchItem, client: ApiClientPrincipal | undefined): Promise<{ records: JournalRecord[]; visit: Visit['visit'] } | null> {
  const page = parsePageUrl(item.url);
  if (!page) throw urlRefused('url', NOT_HTTP_URL);
  const site = await deps.sites.byHostname(page.hostname);
  if (!site) throw noAccess();
  requireClientAccess(client, 'ingest:write', site.id, 'editor');
  const at = new Date(item.timestamp);
  if (botFiltered(deps, site, item.user_agent)) return null;
  const visit = await visitColumns(deps, {
    site,
    page,
    referrer: item.referrer,
    userAgent: item.user_agent,
    ip: item.visitor_ip,
    width: item.width,
    at,
    clientVisitKey: item.session_id,
  });
  const records =
    item.type === 'pageview'
      ? pageviewRecords(site, hitRow(visit, { width: item.width, source: 'server' }))
      : eventRecords(site, eventRow(visit, { name: item.name, props: item.properties, source: 'server' }));
  return { records, visit: visit.visit };
}

export async function serverPageview(deps: IngestDeps, body: ServerPageview, client: ApiClientPrincipal | undefined): Promise<ItemStatus> {
  const built = await serverRecords(deps, { ...body, type: 'pageview' }, client);
  if (!built) return 'filtered';
  await append(deps, built.records, [built.visit]);
  return 'accepted';
}

export async function serverEvent(deps: IngestDeps, body: ServerEvent, client: ApiClientPrincipal | undefined): Promise<ItemStatus> {
  const built = await serverRecords(deps, { ...body, type: 'event' }, client);
  if (!built) return 'filtered';
  await append(deps, built.records, [built.visit]);
  return 'accepted';
}

export interface BatchItemResult {
  index: number;
  status: ItemStatus | 'rejected';
  code?: string;
  message?: string;
  /** Every bad field of a rejected item, as a single request's 400 would name them. */
  fields?: FieldError[];
}

const checkBatchItem = compileChecker(SERVER_BATCH_ITEM);

export function rejected(index: number, err: PlumbError): BatchItemResult {
  const fields = (err.data as { fields?: FieldError[] } | undefined)?.fields;
  return { index, status: 'rejected', code: String(err.type), message: err.message, ...(fields ? { fields } : {}) };
}

/**
 * Each item is judged on its own (its schema, its site, the token's access to that site); the
 * accepted ones are appended together (one fsync), so the response lists exactly what was stored.
 */
export async function serverBatch(
  deps: IngestDeps,
  items: readonly ServerBatchItem[],
  client: ApiClientPrincipal | undefined,
): Promise<{ results: BatchItemResult[]; accepted: number; filtered: number; rejected: number }> {
  // Per-item answers are for per-site problems; a token that may not ingest anywhere is refused whole.
  if (client && !client.scopes.includes('ingest:write')) throw new PlumbError(403, 'forbidden', 'This token lacks the ingest:write scope');
  const results: BatchItemResult[] = [];
  const records: JournalRecord[] = [];
  const visits: Visit['visit'][] = [];
  for (const [index, item] of items.entries()) {
    const issues = checkBatchItem(item);
    if (issues.length > 0) {
      results.push(rejected(index, validationFailed(issues.map(({ field, message }) => ({ field, message })))));
      continue;
    }
    try {
      const built = await serverRecords(deps, item, client);
      if (built) {
        records.push(...built.records);
        visits.push(built.visit);
      }
      results.push({ index, status: built ? 'accepted' : 'filtered' });
    } catch (err) {
      if (!(err instanceof PlumbError)) throw err;
      results.push(rejected(index, err));
    }
  }
  await append(deps, records, visits);
  const count = (status: BatchItemResult['status']) => results.filter((r) => r.status === status).length;
  return { results, accepted: count('accepted'), filtered: count('filtered'), rejected: count('rejected') };
}

export const now = (deps: IngestDeps) => deps.now?.() ?? new Date();
