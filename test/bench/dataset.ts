// Benchmark data: N analytics rows for one site over 90 days, generated inside the analytics store
// with INSERT … SELECT FROM numbers() (deterministic hashes, no client round trips), shaped like real
// traffic: visits of 1–8 pageviews, a long tail of pages, a few sources, countries and devices,
// custom events with properties, and engagement events. The visits table is then rebuilt from them,
// as after a bulk import (rows inserted here bypass the ingest pipeline that writes visits).
import { countDailyBreakdowns } from '../../lib/analytics/daily-breakdowns.ts';
import { rebuildVisits } from '../../lib/analytics/visits.ts';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam, type Site } from '../../lib/sites/sites.ts';
import { type AnalyticsStore, openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { createUser } from '../../lib/users/users.ts';

/** The instance owner every bench data dir has. */
export const BENCH_OWNER = { email: 'bench@example.com', password: 'benchmark password' } as const;

export interface DatasetSpec {
  /** Total rows (hits + events), e.g. 10_000_000. */
  rows: number;
  days: number;
  siteId: string;
  teamId: string;
  /** The last day covered ends at this instant. */
  end: Date;
  /** False: the closed days are left uncounted, as a node upgraded to daily breakdowns finds them. Default true. */
  countDays?: boolean;
}

/** Parses `--dataset 10m` / `1m` / `250k` into a row count. */
export function datasetSize(args: readonly string[], fallback: number): number {
  const at = args.indexOf('--dataset');
  const raw = at === -1 ? undefined : args[at + 1];
  if (!raw) return fallback;
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(raw);
  if (!match) throw new Error(`--dataset: expected e.g. 10m, 500k or 200000 (got ${raw})`);
  return Math.round(Number(match[1]) * ({ k: 1e3, m: 1e6, '': 1 }[match[2].toLowerCase() as 'k' | 'm' | '']));
}

/**
 * 80% of rows are pageviews (hits), 20% events (three quarters custom, a quarter engagement).
 * Each group of 4 consecutive numbers forms a visit; one in three visits is a returning visitor's,
 * whose id is of the UTC day the visit starts, as Plumb's visitor ids are (a new salt each day).
 * The visits are built from the rows, and the closed days counted into daily_breakdowns, as the
 * leader would have by then.
 */
export async function generateDataset(store: AnalyticsStore, spec: DatasetSpec): Promise<{ hits: number; events: number; ms: number }> {
  const started = performance.now();
  const db = await store.ensureTenant(spec.teamId);
  const hits = Math.round(spec.rows * 0.8);
  const events = spec.rows - hits;
  const params = { db, site: spec.siteId, end: spec.end, span: spec.days * 86_400_000 };
  // Shared expressions: the visit (n/4), its start spread over the span, its pageviews a few
  // seconds to minutes apart, and its visitor (one in three visits is a returning visitor's).
  const visit = 'intDiv(number, 4)';
  const start = `{end:DateTime64(3)} - toIntervalMillisecond(cityHash64(${visit}, 1) % {span:UInt64})`;
  const common = (salt: number) => `
      ${start} + toIntervalSecond((number % 4) * (cityHash64(${visit}, 2) % 240)) AS ts,
      {site:UUID} AS site_id,
      cityHash64(${visit}, 3) AS session_id,
      cityHash64(intDiv(${visit}, 3), 4, toDate(${start}, 'UTC')) AS visitor_id,
      concat('/', ['', 'pricing', 'blog', 'docs', 'about', 'features', 'blog/launch', 'docs/start', 'careers', 'contact'][1 + cityHash64(number, ${salt}) % 10],
             if(cityHash64(number, ${salt + 1}) % 5 = 0, concat('/', toString(cityHash64(number, ${salt + 2}) % 500)), '')) AS path,
      'bench.example' AS hostname,
      ['', 'google.com', 'news.ycombinator.com', 'chatgpt.com', 'twitter.com', 'github.com'][1 + cityHash64(${visit}, 5) % 6] AS referrer,
      ['', 'Google', 'Hacker News', 'ChatGPT', 'X', 'GitHub'][1 + cityHash64(${visit}, 5) % 6] AS referrer_source,
      ['direct', 'search', 'referral', 'ai', 'social', 'referral'][1 + cityHash64(${visit}, 5) % 6] AS channel,
      if(cityHash64(${visit}, 6) % 7 = 0, 'newsletter', '') AS utm_source,
      if(cityHash64(${visit}, 6) % 7 = 0, 'email', '') AS utm_medium,
      if(cityHash64(${visit}, 6) % 7 = 0, 'launch', '') AS utm_campaign,
      '' AS utm_term, '' AS utm_content,
      ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'NL', 'CA', 'ES'][1 + cityHash64(${visit}, 7) % 10] AS country,
      '' AS region,
      ['Chrome', 'Safari', 'Firefox', 'Edge', 'Samsung Internet'][1 + cityHash64(${visit}, 8) % 5] AS browser,
      ['Windows', 'macOS', 'iOS', 'Android', 'Linux'][1 + cityHash64(${visit}, 9) % 5] AS os,
      ['desktop', 'mobile', 'tablet'][1 + cityHash64(${visit}, 10) % 3] AS device`;
  await store.command(
    `INSERT INTO {db:Identifier}.hits
       (ts, site_id, session_id, visitor_id, path, hostname, referrer, referrer_source, channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content,
        country, region, browser, os, device, hit_id, browser_version, os_version, screen_width, engagement_ms, is_entry, source)
     SELECT ts, site_id, session_id, visitor_id, path, hostname, referrer, referrer_source, channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content,
            country, region, browser, os, device,
            generateUUIDv4(number) AS hit_id, '131' AS browser_version, '10' AS os_version, 1440 AS screen_width, 0 AS engagement_ms,
            (number % 4 = 0) AS is_entry, 'tracker' AS source
     FROM (SELECT number, ${common(11)} FROM numbers({hits:UInt64}))`,
    { ...params, hits },
  );
  await store.command(
    `INSERT INTO {db:Identifier}.events
       (ts, site_id, session_id, visitor_id, path, hostname, referrer, referrer_source, channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content,
        country, region, browser, os, device, event_id, name, props, revenue, source)
     SELECT ts, site_id, session_id, visitor_id, path, hostname, referrer, referrer_source, channel, utm_source, utm_medium, utm_campaign, utm_term, utm_content,
            country, region, browser, os, device,
            generateUUIDv4(number) AS event_id,
            if(number % 4 = 3, '$engagement', ['Signup', 'Download', 'Outbound Link: Click', 'Purchase', 'Play'][1 + cityHash64(number, 20) % 5]) AS name,
            if(number % 4 = 3, map('engagement_ms', toString(1000 + cityHash64(number, 21) % 120000)),
               map('plan', ['free', 'pro', 'team'][1 + cityHash64(number, 22) % 3], 'source', ['header', 'footer', 'modal', 'pricing'][1 + cityHash64(number, 23) % 4])) AS props,
            NULL AS revenue, 'tracker' AS source
     FROM (SELECT number, ${common(31)} FROM numbers({events:UInt64}))`,
    { ...params, events },
  );
  await rebuildVisits(store, db);
  if (spec.countDays !== false) await countDailyBreakdowns(store, db, spec.end);
  return { hits, events, ms: performance.now() - started };
}

/**
 * A data dir for a bench (no node may hold it): a team, its site bench.example, the owner
 * (BENCH_OWNER), and `rows` generated analytics rows over 90 days to now; `countDays` false leaves
 * its closed days uncounted, as an upgrade to a version with daily breakdowns finds them.
 */
export async function seedBenchDataDir(dataDir: string, rows: number, countDays = true): Promise<{ site: Site; teamId: string; hits: number; events: number; ms: number }> {
  const metadata = await openMetadataStore({ dataDir, log: silentLog });
  const team = await createTeam(metadata, { name: 'bench' });
  const site = await createSite(metadata, { teamId: team.id, domain: 'bench.example' });
  await createUser(metadata, { ...BENCH_OWNER, role: 'owner' });
  await metadata.close();
  const analytics = await openAnalyticsStore({ dataDir, log: silentLog });
  const generated = await generateDataset(analytics, { rows, days: 90, siteId: site.id, teamId: team.id, end: new Date(), countDays });
  await analytics.close();
  return { site, teamId: team.id, ...generated };
}
