// A site with something in every table a takeout holds, for the takeout and Plumb-import tests:
// generated pageviews and events (deterministic), visits built from them (one visit with a
// superseded state, so the collapse shows), web vitals, AI fetches, Plausible-style imported
// days, goals, a funnel and a password-protected share link. Values include the awkward ones: a
// path with a comma, quotes and a newline, a referrer starting with `=`, a 64-bit visitor id.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { rebuildVisits } from '../../lib/analytics/visits.ts';
import { createFunnel } from '../../lib/funnels/funnels.ts';
import { createGoal } from '../../lib/goals/goals.ts';
import { createShareLink } from '../../lib/share/links.ts';
import { readSheets } from '../../lib/exports/xlsx.ts';
import { createSite, createTeam, type Site } from '../../lib/sites/sites.ts';
import { type Person, person } from './accounts.ts';
import type { TestNode } from './node.ts';
import { seededRandom } from './seeded-random.ts';

export const AWKWARD_PATH = '/a,"b"\nc';
export const FORMULA_REFERRER = '=HYPERLINK("x")';
export const BIG_VISITOR = '18446744073709551000';

export interface SeededSite {
  site: Site;
  admin: Person;
  viewer: Person;
  /** Rows of each takeout table as seeded (visits: live ones). */
  counts: Record<string, number>;
}

const HOUR = 3_600_000;

export async function seedTakeoutSite(t: TestNode, domain: string, seed = 7): Promise<SeededSite> {
  const metadata = t.node.runtime.metadata();
  const analytics = t.node.runtime.analytics();
  const team = await createTeam(metadata, { name: `Team of ${domain}` });
  const site = await createSite(metadata, { teamId: team.id, domain, hostnames: [`shop.${domain}`], timezone: 'Europe/Berlin' });
  const database = await analytics.ensureTenant(team.id);
  const admin = await person(t);
  const viewer = await person(t);
  await metadata.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'admin'), ($1, $3, 'viewer')", [site.id, admin.id, viewer.id]);

  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const PATHS = ['/', '/pricing', '/blog', '/blog/hello', '/docs', AWKWARD_PATH];
  const FROM = [
    ['', '', 'direct'],
    ['google.com', 'Google', 'search'],
    ['chatgpt.com', 'ChatGPT', 'ai'],
    [FORMULA_REFERRER, FORMULA_REFERRER, 'referral'],
  ];
  const hits: Record<string, unknown>[] = [];
  const events: Record<string, unknown>[] = [];
  const start = Date.parse('2026-01-05T06:00:00Z');
  for (let session = 1; session <= 60; session++) {
    const visitor = session === 1 ? BIG_VISITOR : String(5_000_000 + Math.floor(rand() * 40));
    const [referrer, referrer_source, channel] = pick(FROM);
    const where = pick([['DE', 'Berlin'], ['FR', 'Normandy'], ['US', 'California']]);
    const who = { browser: pick(['Firefox', 'Chrome']), os: pick(['Linux', 'Windows']), device: pick(['desktop', 'mobile']) };
    let ts = start + Math.floor(rand() * 7 * 24) * HOUR + Math.floor(rand() * HOUR);
    const pages = 1 + Math.floor(rand() * 4);
    for (let i = 0; i < pages; i++) {
      const first = i === 0;
      hits.push({
        ts: new Date(ts), site_id: site.id, session_id: String(session), visitor_id: visitor, hit_id: randomUUID(), path: first && session === 2 ? AWKWARD_PATH : pick(PATHS),
        hostname: domain, referrer: first ? referrer : '', referrer_source: first ? referrer_source : '', channel: first ? channel : 'internal',
        utm_source: first && channel === 'search' ? 'google' : '', country: where[0], region: where[1], ...who, browser_version: '133', os_version: '',
        screen_width: 1280, is_entry: first ? 1 : 0, source: 'tracker',
      });
      ts += 30_000 + Math.floor(rand() * 120_000);
    }
    if (rand() < 0.4) {
      const plan = pick(['pro', 'free']);
      events.push({
        ts: new Date(ts), site_id: site.id, session_id: String(session), visitor_id: visitor, event_id: randomUUID(), name: 'Signup', path: '/pricing', hostname: domain,
        country: where[0], region: where[1], ...who, props: { plan }, revenue: plan === 'pro' ? '49.99' : null, source: 'tracker',
      });
    }
    events.push({ ts: new Date(ts + 1000), site_id: site.id, session_id: String(session), visitor_id: visitor, event_id: randomUUID(), name: '$engagement', path: '/', hostname: domain, props: { engagement_ms: String(1000 + Math.floor(rand() * 60_000)) }, source: 'tracker' });
  }
  await analytics.insert('hits', hits, { database });
  await analytics.insert('events', events, { database });
  await rebuildVisits(analytics, database);
  // Session 1's visit as the ingest pipeline leaves it after a later change: its first state
  // cancelled and a second one written. Only the second is live.
  const [first] = await analytics.query<Record<string, unknown>>('SELECT * FROM {db:Identifier}.visits WHERE site_id = {site:UUID} AND session_id = 1', { db: database, site: site.id });
  await analytics.insert('visits', [{ ...first, sign: -1 }, { ...first, sign: 1, version: 2, visit_engagement_ms: 123_456 }], { database });

  await analytics.insert(
    'web_vitals',
    Array.from({ length: 12 }, (_, i) => ({ ts: new Date(start + i * HOUR), site_id: site.id, session_id: String(1 + i), path: pick(PATHS), metric: pick(['LCP', 'CLS', 'INP']), value: Math.round(rand() * 4000) / 10, rating: 'good', device: 'desktop', country: 'DE' })),
    { database },
  );
  await analytics.insert(
    'ai_fetches',
    Array.from({ length: 5 }, (_, i) => ({ ts: new Date(start + i * 2 * HOUR), site_id: site.id, fetch_id: randomUUID(), path: '/docs', url: `https://${domain}/docs`, status_code: 200, content_type: 'text/html', response_time_ms: 20 + i, bytes: String(2 ** 40 + i), user_agent: 'GPTBot/1.2', assistant_name: 'GPTBot', assistant_family: 'OpenAI', assistant_category: 'crawler', resource_type: 'html' })),
    { database },
  );
  // Days before the native data, as a Plausible import leaves them.
  const importId = randomUUID();
  const days = ['2025-12-01', '2025-12-02', '2025-12-03'];
  await analytics.insert('imported_visitors', days.map((date, i) => ({ site_id: site.id, import_id: importId, date, visitors: 10 + i, pageviews: 30 + i, bounces: 4, visits: 12 + i, visit_duration: 600 })), { database });
  await analytics.insert(
    'imported_pages',
    days.map((date, i) => ({ site_id: site.id, import_id: importId, date, hostname: domain, page: '/', visits: 12 + i, visitors: 10 + i, pageviews: 30 + i, scroll_depth: i === 0 ? null : 40 + i, pageleave_visitors: 5 })),
    { database },
  );
  await analytics.insert('imported_sources', days.map((date, i) => ({ site_id: site.id, import_id: importId, date, source: 'Google', referrer: 'google.com', pageviews: 30 + i, visitors: 10 + i, visits: 12 + i, visit_duration: 600, bounces: 4 })), { database });

  await createGoal(metadata, admin, site.id, { name: 'Pricing', type: 'path', path_pattern: '/pricing' });
  await createGoal(metadata, admin, site.id, { name: 'Pro signup', type: 'event', event_name: 'Signup', property_conditions: [{ key: 'plan', value: 'pro' }], revenue: { currency: 'USD' } });
  await createFunnel(metadata, admin, site.id, { name: 'To signup', steps: [{ type: 'path', path_pattern: '/' }, { type: 'event', event_name: 'Signup' }] });
  await createShareLink(metadata, admin, site.id, { name: 'Board', password: 'a share password' }, t.url);

  const sessions = new Set(hits.map((h) => h.session_id)).size;
  return {
    site,
    admin,
    viewer,
    counts: {
      site: 1, goals: 2, funnels: 1, share_links: 1, pageviews: hits.length, events: events.length, visits: sessions, web_vitals: 12, ai_fetches: 5,
      imported_visitors: 3, imported_sources: 3, imported_pages: 3, imported_entry_pages: 0, imported_exit_pages: 0, imported_locations: 0,
      imported_devices: 0, imported_browsers: 0, imported_operating_systems: 0, imported_custom_events: 0,
    },
  };
}

/** Every entry of a zip held in memory, by name, as an independent reader (yauzl) sees it. */
export function readZip(bytes: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const entries = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, async (err, stream) => {
          if (err || !stream) return reject(err);
          const chunks: Buffer[] = [];
          for await (const chunk of stream) chunks.push(chunk as Buffer);
          entries.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
      zip.readEntry();
    });
  });
}

/**
 * The sheets of an xlsx in order, each as its rows of values, as exceljs's streaming reader reads
 * them (the zip's parts read by yauzl and handed over in the order that reader needs: see readSheets).
 */
export async function readWorkbook(bytes: Buffer): Promise<{ name: string; rows: unknown[][] }[]> {
  const parts = [...(await readZip(bytes))].map(([name, data]) => ({ name, open: async () => Readable.from([data]) }));
  const sheets: { name: string; rows: unknown[][] }[] = [];
  for await (const sheet of readSheets(parts)) {
    const rows: unknown[][] = [];
    for await (const row of sheet.rows) rows.push(row);
    sheets.push({ name: sheet.name, rows });
  }
  return sheets;
}
