// AI-fetch ingest: requests AI crawlers and assistants made to a site, forwarded from its web
// server's logs (by `plumb forward-ai-fetches` or any client). A single fetch is stored or refused
// whole; a batch is judged item by item, its good fetches stored together and its bad ones named.
import { randomUUID } from 'node:crypto';
import type { ApiClientPrincipal } from '../auth/api-clients.ts';
import { requireClientAccess } from '../auth/api-clients.ts';
import { type FieldError, validationFailed } from '../errors.ts';
import type { Site } from '../sites/sites.ts';
import { compileChecker } from '../validation.ts';
import { type AiAgent, matchAiAgent } from './enrich/ai-agents.ts';
import { resourceType } from './enrich/resource-type.ts';
import { parsePageUrl } from './enrich/url.ts';
import { append, type BatchItemResult, type IngestDeps, isSitesHost, type JournalRecord, NOT_HTTP_URL, NOT_THE_SITES, noAccess, now, rejected } from './pipeline.ts';
import { AI_FETCH, type AiFetch } from './schemas.ts';

const checkAiFetch = compileChecker(AI_FETCH);

/** A fetch whose fields have been checked, with the AI agent its user agent names. */
interface CheckedFetch {
  item: AiFetch;
  agent: AiAgent;
  /** `url`, else `path`: the resource fetched. */
  target: string;
}

export interface AiFetchBatchAnswer {
  accepted: number;
  rejected: number;
  results: (Omit<BatchItemResult, 'status'> & { status: 'accepted' | 'rejected' })[];
}

/**
 * Every problem of one fetch at once: the schema's, a missing path and url, an unknown agent, and
 * a url on another host than the site's (its path would be filed under the site).
 */
async function checkFetch(deps: IngestDeps, site: Site, item: AiFetch): Promise<{ fetch: CheckedFetch } | { problems: FieldError[] }> {
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message });
  const issues = checkAiFetch(item);
  for (const issue of issues) problem(issue.field, issue.message);
  const bad = new Set(issues.map((issue) => issue.field));
  const agent = bad.has('user_agent') ? null : matchAiAgent(item.user_agent);
  if (!bad.has('user_agent') && !agent) problem('user_agent', 'user_agent is not a known AI agent');
  const target = item.url ?? item.path;
  if (target === undefined) problem('path', 'path or url is required');
  if (item.url !== undefined && !bad.has('url')) {
    const page = parsePageUrl(item.url);
    if (!page || !(await isSitesHost(deps, site, page.hostname))) problem('url', `url ${page ? NOT_THE_SITES : NOT_HTTP_URL}`);
  }
  if (problems.length > 0 || !agent || target === undefined) return { problems };
  return { fetch: { item, agent, target } };
}

/** Crawler-log forwarding: the row of one AI assistant's fetch of a site resource. */
function aiFetchRecord(site: Site, { item, agent, target }: CheckedFetch, at: Date): JournalRecord {
  return {
    table: 'ai_fetches',
    team: site.team_id,
    row: {
      ts: (item.timestamp ? new Date(item.timestamp) : at).toISOString(),
      site_id: site.id,
      fetch_id: randomUUID(),
      path: new URL(target, `https://${site.domain}`).pathname,
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

/** The site, once the token may write AI fetches to it: access is judged before any field, so a token learns nothing about other sites. */
async function writableSite(deps: IngestDeps, siteId: string, client: ApiClientPrincipal | undefined): Promise<Site> {
  const site = await deps.sites.byId(siteId);
  if (!site) throw noAccess();
  requireClientAccess(client, 'ai-fetch:write', site.id, 'editor');
  return site;
}

/** Stores one AI fetch, or refuses it with a 400 naming every bad field. */
export async function aiFetch(deps: IngestDeps, siteId: string, item: AiFetch, client: ApiClientPrincipal | undefined): Promise<{ accepted: number }> {
  const site = await writableSite(deps, siteId, client);
  const checked = await checkFetch(deps, site, item);
  if ('problems' in checked) throw validationFailed(checked.problems);
  await append(deps, [aiFetchRecord(site, checked.fetch, now(deps))]);
  return { accepted: 1 };
}

/**
 * Stores the good fetches of a batch together (one append, one fsync) and names the bad ones, each
 * with every bad field, so a forwarder can drop one odd log line without losing its neighbours.
 */
export async function aiFetchBatch(deps: IngestDeps, siteId: string, items: readonly AiFetch[], client: ApiClientPrincipal | undefined): Promise<AiFetchBatchAnswer> {
  const site = await writableSite(deps, siteId, client);
  const at = now(deps);
  const records: JournalRecord[] = [];
  const results: AiFetchBatchAnswer['results'] = [];
  for (const [index, item] of items.entries()) {
    const checked = await checkFetch(deps, site, item);
    if ('problems' in checked) {
      results.push({ ...rejected(index, validationFailed(checked.problems)), status: 'rejected' });
      continue;
    }
    records.push(aiFetchRecord(site, checked.fetch, at));
    results.push({ index, status: 'accepted' });
  }
  if (records.length > 0) await append(deps, records);
  return { accepted: records.length, rejected: items.length - records.length, results };
}
