// What the ingest benchmarks send as visitors: the browsers and referrers of their many-visitor
// workloads (in the pipeline alone, and over HTTP), so both measure the same mix; the traffic of
// the HTTP ones; and their data dir and settings.
import type autocannon from 'autocannon';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { tempDataDir } from '../support/instance.ts';

/** Six browsers on desktop and mobile, as real visitors send them. */
export const VISITOR_USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
] as const;

/** Where visitors come from: none (direct), search, a forum, an AI assistant, social, a blog. */
export const VISITOR_REFERRERS = [undefined, 'https://www.google.com/', 'https://news.ycombinator.com/', 'https://chatgpt.com/', 'https://t.co/abc', 'https://example.org/blog/post'] as const;

/** The HTTP benchmarks' tracker pageview: one visitor, one page, as a browser's beacon sends it. */
export const TRACKER_BODY = JSON.stringify({ url: 'https://bench.example/pricing?utm_source=newsletter', referrer: 'https://www.google.com/', width: 1440 });
export const TRACKER_HEADERS = {
  'content-type': 'text/plain',
  origin: 'https://bench.example',
  'user-agent': VISITOR_USER_AGENTS[0],
};

const PAGES_PER_VISIT = 3;
/** Public unicast first octets, so every address is looked up in the geography database. */
const FIRST_OCTETS = [23, 31, 45, 62, 77, 81, 89, 94, 103, 151, 176, 185, 188, 193, 212, 217];

/**
 * Traffic shaped like a site's: visits of three pageviews (a visitor's address in X-Forwarded-For,
 * read with one trusted proxy hop: SITE_TRAFFIC_ENV; one of six browsers, one of six referrers), on
 * 200 pages, each visitor new, so the caches of visitor ids, places and pages miss as they do on a
 * site. Every request is made as it is sent, from a count shared by all connections of one list
 * (each connection would otherwise walk the same list in step, and every visitor would arrive
 * fifty times at once); a warm-up and the load after it given the same list go on with new visitors.
 */
export function siteTraffic(): autocannon.Request[] {
  let sent = 0;
  return [
    {
      method: 'POST',
      path: '/ingest',
      setupRequest(request) {
        const n = sent++;
        const visitor = Math.floor(n / PAGES_PER_VISIT);
        const address = `${FIRST_OCTETS[visitor % FIRST_OCTETS.length]}.${(visitor >> 4) & 255}.${(visitor >> 12) & 255}.${(visitor % 250) + 1}`;
        const page = (visitor * 7 + (n % PAGES_PER_VISIT) * 13) % 200;
        const headers = { ...TRACKER_HEADERS, 'user-agent': VISITOR_USER_AGENTS[visitor % VISITOR_USER_AGENTS.length], 'x-forwarded-for': address };
        return { ...request, headers, body: JSON.stringify({ url: `https://bench.example/page-${page}`, referrer: VISITOR_REFERRERS[visitor % VISITOR_REFERRERS.length], width: 1440 }) };
      },
    },
  ];
}

/** What a node needs to read site traffic's visitors from X-Forwarded-For. */
export const SITE_TRAFFIC_ENV = { PLUMB_TRUSTED_PROXY_HOPS: '1' };

/** A node under load: no rate limit on ingest, and only warnings logged. */
export const LOADED_NODE_ENV = { PLUMB_INGEST_RATE_PER_SECOND: '1000000', PLUMB_INGEST_BURST: '1000000', PLUMB_LOG_LEVEL: 'warn' };

/** A new data dir whose metadata holds one team with the site the tracker traffic is for (bench.example). */
export async function dataDirWithTrackedSite(prefix: string): Promise<{ dataDir: string; teamId: string }> {
  const dataDir = tempDataDir(prefix);
  const metadata = await openMetadataStore({ dataDir, log: silentLog });
  const team = await createTeam(metadata, { name: 'bench' });
  await createSite(metadata, { teamId: team.id, domain: 'bench.example' });
  await metadata.close();
  return { dataDir, teamId: team.id };
}
