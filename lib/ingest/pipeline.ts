// The ingest use cases: validate → resolve site → bot filter → enrich → append to the durable
// journal. Every function resolves only once its rows are on disk, so a 202 is a promise kept.
import { randomUUID } from 'node:crypto';
import type { ApiClientPrincipal } from '../auth/api-clients.ts';
import { requireClientAccess } from '../auth/api-clients.ts';
import { badRequest, PlumbError, unavailable } from '../errors.ts';
import { hostnameOfUrl } from '../sites/hostname.ts';
import type { Site, SiteDirectory } from '../sites/sites.ts';
import { eventRow, hitRow, type IdentityDeps, type Visit, visitColumns } from './context.ts';
import { matchAiAgent } from './enrich/ai-agents.ts';
import { BoundedCache } from './enrich/cache.ts';
import { isBotRequest } from './enrich/bots.ts';
import { resourceType } from './enrich/resource-type.ts';
import { type Journal, JournalFullError } from './journal.ts';
import { visitStateKey, withoutPassingStates } from './visits.ts';
import type { RejectionCounter } from './rejections.ts';
import type { AiFetch, ServerBatchItem, ServerEvent, ServerPageview, TrackerEvent, TrackerPageview, TrackerWebVital } from './schemas.ts';

export type AnalyticsTable = 'hits' | 'events' | 'web_vitals' | 'ai_fetches' | 'visits';

/** One row on its way to the analytics store. */
export interface JournalRecord {
  table: AnalyticsTable;
  /** The team whose tenant database receives the row. */
  team: string;
  row: Record<string, unknown>;
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
  /** Called after rows are appended, to wake the writer. */
  appended(): void;
  now?: () => Date;
}

export type ItemStatus = 'accepted' | 'filtered';

/** Event names starting with `$` are Plumb's own (engagement); nobody else may send them. */
const RESERVED_EVENT = /^\$/;
const FUTURE_TOLERANCE_MS = 5 * 60_000;
const OLDEST_TIMESTAMP = Date.UTC(2000, 0, 1);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Appends records to the durable path. `visits` are the visits whose rows are among them: if the
 * append fails those visits end, so no later row cancels a state that was never stored.
 */
async function append(deps: IngestDeps, records: JournalRecord[], visits: readonly Visit['visit'][] = []): Promise<void> {
  try {
    await deps.journal.append(withoutPassingStates(records, (r) => visitStateKey(r.row)));
  } catch (err) {
    for (const visit of visits) visit.abandon();
    if (err instanceof JournalFullError) throw unavailable('Ingest buffer is full; retry shortly', err.retryAfterSeconds);
    throw err;
  }
  deps.appended();
}

const visitRecords = (team: string, rows: Record<string, unknown>[]): JournalRecord[] => rows.map((row) => ({ table: 'visits', team, row }));

/** The records of one pageview: the hit, then its visit's new state (and the cancelled old one). */
function pageviewRecords(site: Site, visit: Visit, hit: Record<string, unknown>): JournalRecord[] {
  return [{ table: 'hits', team: site.team_id, row: hit }, ...visitRecords(site.team_id, visit.visit.pageview({ ts: String(hit.ts), columns: visit.columns }))];
}

/** The records of one event; `$engagement` adds its time to the visit, any other event counts. */
function eventRecords(site: Site, visit: Visit, event: Record<string, unknown>, engagementMs: number | undefined): JournalRecord[] {
  return [{ table: 'events', team: site.team_id, row: event }, ...visitRecords(site.team_id, visit.visit.event({ engagementMs }))];
}

/** Hostnames of the Origin headers seen (a site's pages send one Origin): parsing it costs more than the rest of the lookup. */
const originHostnames = new BoundedCache<string | null>(1000);

/** The site a browser request belongs to, from its Origin (or Referer when a privacy tool drops Origin). */
export async function siteOfBrowserRequest(deps: IngestDeps, request: RequestInfo): Promise<Site> {
  const source = request.origin ?? request.referer;
  if (!source) throw new PlumbError(403, 'forbidden', 'An Origin header is required on tracker ingest');
  let hostname = request.origin === undefined ? undefined : originHostnames.get(request.origin);
  if (hostname === undefined) {
    hostname = hostnameOfUrl(source);
    if (request.origin !== undefined) originHostnames.set(request.origin, hostname);
  }
  if (!hostname) throw new PlumbError(403, 'forbidden', 'The Origin is not an http(s) site');
  const site = await deps.sites.byHostname(hostname);
  if (!site) throw new PlumbError(403, 'forbidden', `No site is registered for ${hostname}`);
  return site;
}

function botFiltered(deps: IngestDeps, site: Site, userAgent: string, headers?: RequestInfo['headers']): boolean {
  if (!isBotRequest(userAgent, headers)) return false;
  deps.rejections.count(site.id, 'bot');
  return true;
}

const invalidUrl = () => badRequest('url must be an absolute http(s) URL');
/** One answer for "no such site" and "not yours", so a token cannot probe which sites exist. */
export const noAccess = () => new PlumbError(403, 'forbidden', 'This token has no access to that site');

export async function trackerPageview(deps: IngestDeps, body: TrackerPageview, request: RequestInfo): Promise<ItemStatus> {
  const site = await siteOfBrowserRequest(deps, request);
  if (botFiltered(deps, site, request.userAgent, request.headers)) return 'filtered';
  const visit = await visitColumns(deps, { site, url: body.url, referrer: body.referrer, userAgent: request.userAgent, ip: request.ip, width: body.width, at: now(deps) });
  if (!visit) throw invalidUrl();
  await append(deps, pageviewRecords(site, visit, hitRow(visit, { width: body.width, source: 'tracker' })), [visit.visit]);
  return 'accepted';
}

export async function trackerEvent(deps: IngestDeps, body: TrackerEvent, request: RequestInfo): Promise<ItemStatus> {
  const engagement = body.name === '$engagement';
  if (RESERVED_EVENT.test(body.name) && !engagement) throw badRequest('Event names starting with $ are reserved');
  if (engagement && body.engagement_ms === undefined) throw badRequest('$engagement needs engagement_ms');
  const site = await siteOfBrowserRequest(deps, request);
  if (botFiltered(deps, site, request.userAgent, request.headers)) return 'filtered';
  const visit = await visitColumns(deps, { site, url: body.url, referrer: body.referrer, userAgent: request.userAgent, ip: request.ip, width: body.width, at: now(deps) });
  if (!visit) throw invalidUrl();
  const props = engagement ? { engagement_ms: String(body.engagement_ms) } : body.props;
  const row = eventRow(visit, { name: body.name, props, source: 'tracker' });
  await append(deps, eventRecords(site, visit, row, engagement ? body.engagement_ms : undefined), [visit.visit]);
  return 'accepted';
}

export async function trackerWebVital(deps: IngestDeps, body: TrackerWebVital, request: RequestInfo): Promise<ItemStatus> {
  const site = await siteOfBrowserRequest(deps, request);
  if (botFiltered(deps, site, request.userAgent, request.headers)) return 'filtered';
  const visit = await visitColumns(deps, { site, url: body.url, userAgent: request.userAgent, ip: request.ip, width: body.width, at: now(deps) });
  if (!visit) throw invalidUrl();
  const { ts, site_id, session_id, path, device, country } = visit.columns;
  const row = { ts, site_id, session_id, path, device, country, metric: body.metric, value: body.value, rating: body.rating ?? '' };
  await append(deps, [{ table: 'web_vitals', team: site.team_id, row }]);
  return 'accepted';
}

/** Parses an RFC 3339 timestamp; historical replay is allowed, more than 5 minutes ahead is not. */
export function parseEventTime(timestamp: string, at: Date): Date {
  const parsed = RFC3339.test(timestamp) ? new Date(timestamp) : new Date(Number.NaN);
  if (Number.isNaN(parsed.getTime())) throw badRequest('timestamp must be an RFC 3339 date-time, e.g. 2026-11-21T10:00:00Z');
  if (parsed.getTime() > at.getTime() + FUTURE_TOLERANCE_MS) throw badRequest('timestamp is more than 5 minutes in the future');
  if (parsed.getTime() < OLDEST_TIMESTAMP) throw badRequest('timestamp is before 2000-01-01');
  return parsed;
}

/** The journal records of one server-side pageview or event (with its visit's), or null when it is a bot's. */
async function serverRecords(deps: IngestDeps, item: ServerBatchItem, client: ApiClientPrincipal | undefined): Promise<{ records: JournalRecord[]; visit: Visit['visit'] } | null> {
  const hostname = hostnameOfUrl(item.url);
  if (!hostname) throw invalidUrl();
  const site = await deps.sites.byHostname(hostname);
  if (!site) throw noAccess();
  requireClientAccess(client, 'ingest:write', site.id, 'editor');
  if (item.type === 'event' && RESERVED_EVENT.test(item.name)) throw badRequest('Event names starting with $ are reserved');
  const at = parseEventTime(item.timestamp, now(deps));
  if (botFiltered(deps, site, item.user_agent)) return null;
  const visit = await visitColumns(deps, {
    site,
    url: item.url,
    referrer: item.referrer,
    userAgent: item.user_agent,
    ip: item.visitor_ip,
    width: item.width,
    at,
    clientSessionKey: item.session_id,
  });
  if (!visit) throw invalidUrl();
  const records =
    item.type === 'pageview'
      ? pageviewRecords(site, visit, hitRow(visit, { width: item.width, source: 'server' }))
      : eventRecords(site, visit, eventRow(visit, { name: item.name, props: item.properties, source: 'server' }), undefined);
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
}

/**
 * Each item is judged on its own; the accepted ones are appended together (one fsync), so the
 * response lists exactly what was stored. `invalid` carries items that failed schema validation.
 */
export async function serverBatch(
  deps: IngestDeps,
  items: readonly ServerBatchItem[],
  invalid: ReadonlyMap<number, string>,
  client: ApiClientPrincipal | undefined,
): Promise<{ results: BatchItemResult[]; accepted: number; filtered: number; rejected: number }> {
  // Per-item answers are for per-site problems; a token that may not ingest anywhere is refused whole.
  if (client && !client.scopes.includes('ingest:write')) throw new PlumbError(403, 'forbidden', 'This token lacks the ingest:write scope');
  const results: BatchItemResult[] = [];
  const records: JournalRecord[] = [];
  const visits: Visit['visit'][] = [];
  for (const [index, item] of items.entries()) {
    const problem = invalid.get(index);
    if (problem) {
      results.push({ index, status: 'rejected', code: 'validation_failed', message: problem });
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
      results.push({ index, status: 'rejected', code: String(err.type), message: err.message });
    }
  }
  await append(deps, records, visits);
  const count = (status: BatchItemResult['status']) => results.filter((r) => r.status === status).length;
  return { results, accepted: count('accepted'), filtered: count('filtered'), rejected: count('rejected') };
}

/** Crawler-log forwarding: one AI assistant fetch of a site resource. Unknown agents are refused. */
export function aiFetchRecord(site: Site, item: AiFetch, at: Date): JournalRecord {
  const agent = matchAiAgent(item.user_agent);
  if (!agent) throw badRequest('user_agent is not a known AI agent');
  const target = item.url ?? item.path;
  if (!target) throw badRequest('path or url is required');
  let path: string;
  try {
    path = new URL(target, `https://${site.domain}`).pathname;
  } catch {
    throw badRequest('path or url is not a valid URL or path');
  }
  const when = item.timestamp ? parseEventTime(item.timestamp, at) : at;
  return {
    table: 'ai_fetches',
    team: site.team_id,
    row: {
      ts: when.toISOString(),
      site_id: site.id,
      fetch_id: randomUUID(),
      path,
      url: item.url ?? '',
      status_code: item.status_code,
      content_type: item.content_type ?? '',
      response_time_ms: item.response_time_ms ?? 0,
      bytes: item.bytes ?? 0,
      user_agent: item.user_agent,
      assistant_name: agent.name,
      assistant_family: agent.family,
      assistant_category: agent.category,
      resource_type: resourceType(target, item.content_type),
    },
  };
}

export async function aiFetches(deps: IngestDeps, site: Site, items: readonly AiFetch[], client: ApiClientPrincipal | undefined): Promise<number> {
  requireClientAccess(client, 'ai-fetch:write', site.id, 'editor');
  const at = now(deps);
  const records = items.map((item, index) => {
    try {
      return aiFetchRecord(site, item, at);
    } catch (err) {
      if (err instanceof PlumbError && items.length > 1) throw badRequest(`items[${index}]: ${err.message}`);
      throw err;
    }
  });
  await append(deps, records);
  return records.length;
}

const now = (deps: IngestDeps) => deps.now?.() ?? new Date();
