// The Plumb takeout as an import source (lib/imports/sources/plumb.ts), called directly with a
// fake import context: a seeded site's takeout in each of the five formats goes into a fresh site
// of the same domain, which then holds the same rows (every analytics table, imported days too)
// and answers the same KPIs, breakdowns, event analytics and goal conversions. Also: the dry run
// writes nothing, a retried run stores its batches once, bad rows are skipped with their reasons,
// and a takeout of another site, a changed manifest or a zip that is no takeout are refused.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipOf } from '../support/zip.ts';
import { siteTakeout } from '../../lib/exports/site-takeout.ts';
import { ANALYTICS_TAKEOUT_TABLES, takeoutQuery } from '../../lib/exports/takeout-tables.ts';
import { createGoal } from '../../lib/goals/goals.ts';
import { importSetup } from '../../lib/imports/setup.ts';
import type { ImportContext, ImportManifest, StagedFile } from '../../lib/imports/source.ts';
import { ImportInputError } from '../../lib/imports/source.ts';
import { plumbSource } from '../../lib/imports/sources/plumb.ts';
import { createSite, createTeam, type Site } from '../../lib/sites/sites.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { readZip, type SeededSite, seedTakeoutSite } from '../support/takeout.ts';

const FORMATS = ['csv', 'ndjson', 'json', 'parquet', 'xlsx'] as const;
const DOMAIN = 'moving.example';
const RANGE = 'from=2026-01-01&to=2026-01-31';
/** What the stats answer, read through the API. */
const STATS = [
  `stats?${RANGE}`,
  ...['pages', 'entry_pages', 'exit_pages', 'sources', 'channels', 'referrers', 'countries', 'regions', 'browsers', 'os', 'devices', 'utm_source'].map(
    (dimension) => `stats/breakdown?${RANGE}&dimension=${dimension}`,
  ),
  `events/names?${RANGE}`,
  `events/breakdown?${RANGE}&event_name=Signup&property_key=plan`,
  `events/timeseries?${RANGE}&event_name=Signup`,
  `goals/stats?${RANGE}`,
];
const GOALS = [
  { name: 'Pricing', type: 'path' as const, path_pattern: '/pricing' },
  { name: 'Pro signup', type: 'event' as const, event_name: 'Signup', property_conditions: [{ key: 'plan', value: 'pro' }], revenue: { currency: 'USD' } },
];

let t: TestNode;
let seeded: SeededSite;
let owner: Person;
let dir: string;
let targetTeam: { id: string };
const takeouts = new Map<string, StagedFile>();
let expected: { tables: Record<string, unknown[]>; stats: unknown[] };

const db = () => t.node.runtime.metadata();
const store = () => t.node.runtime.analytics();

/** Every analytics table of the site as the takeout reads it (no site or import id), in its order. */
async function tablesOf(site: Site): Promise<Record<string, unknown[]>> {
  const tables: Record<string, unknown[]> = {};
  for (const table of ANALYTICS_TAKEOUT_TABLES) tables[table.name] = await store().query(takeoutQuery(table, false), { db: site.tenant, site: site.id });
  return tables;
}

/** The stats answers of the site, goal ids left out (the goals are created anew). */
async function statsOf(site: Site): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (const path of STATS) {
    const res = await as(t, owner, 'GET', `/api/sites/${site.id}/${path}`);
    expect({ path, status: res.status }).toEqual({ path, status: 200 });
    answers.push(JSON.parse(JSON.stringify(res.body, (key, value) => (key === 'goal_id' ? undefined : value))));
  }
  return answers;
}

const context = (site: Site, importId = randomUUID()): ImportContext => ({
  site: { id: site.id, domain: site.domain, timezone: site.timezone, tenant: site.tenant },
  importId,
  store: store(),
  now: new Date(),
  signal: new AbortController().signal,
  progress: () => undefined,
});

async function targetSite(domain = DOMAIN): Promise<Site> {
  const site = await createSite(db(), { teamId: targetTeam.id, domain, timezone: 'Europe/Berlin' });
  for (const goal of GOALS) await createGoal(db(), owner, site.id, goal);
  return site;
}

/** Frees the domain for the next target: a site's domain is unique among live sites. */
const retire = (site: Site) => db().query('UPDATE sites SET deleted_at = now() WHERE id = $1', [site.id]);

function stage(name: string, bytes: Buffer): StagedFile {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return { name, path, size: bytes.length };
}


const datasets = (manifest: ImportManifest) => Object.fromEntries(manifest.datasets.map((d) => [d.name, d.rows_accepted]));

beforeAll(async () => {
  t = await startTestNode();
  dir = mkdtempSync(join(tmpdir(), 'plumb-takeout-import-test-'));
  seeded = await seedTakeoutSite(t, DOMAIN, 11);
  owner = await person(t, 'owner');
  targetTeam = await createTeam(db(), { name: 'New home' });
  await store().ensureTenant(targetTeam.id);
  for (const format of FORMATS) {
    const file = await siteTakeout({ metadata: db(), analytics: store() }, owner, seeded.site, format);
    const chunks: Buffer[] = [];
    for await (const chunk of file.body) chunks.push(chunk as Buffer);
    takeouts.set(format, stage(file.fileName.replace('-takeout-', `-${format}-takeout-`), Buffer.concat(chunks)));
  }
  expected = { tables: await tablesOf(seeded.site), stats: await statsOf(seeded.site) };
  await retire(seeded.site);
}, 90_000);

afterAll(async () => {
  await t?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the Plumb takeout import source', () => {
  it.each(FORMATS)('brings a %s takeout back whole: the same rows, KPIs, breakdowns, events and goal conversions', async (format) => {
    const site = await targetSite();
    const ctx = context(site);
    const staged = takeouts.get(format)!;
    const analyticsCounts = Object.fromEntries(ANALYTICS_TAKEOUT_TABLES.map((table) => [table.name, seeded.counts[table.name]]).filter(([, n]) => (n as number) > 0));
    const readCounts = { ...analyticsCounts, goals: seeded.counts.goals, funnels: seeded.counts.funnels };

    const checked = await plumbSource.validate([staged], ctx);
    expect(checked).toMatchObject({ source: 'plumb', rows_skipped: 0, skipped: [], from: '2025-12-01', to: expect.stringMatching(/^2026-01-1\d$/) });
    expect(datasets(checked)).toEqual(expect.objectContaining(readCounts));
    expect(checked.rows_accepted).toBe(Object.values(readCounts).reduce((a, b) => (a as number) + (b as number), 0));
    expect(checked.warnings).toEqual([expect.stringContaining('settings and share links are in the takeout but are not carried over')]);
    expect(checked.datasets.find((d) => d.name === 'imported_visitors')).toMatchObject({ from: '2025-12-01', to: '2025-12-03' });
    // The dry run wrote nothing.
    expect(await store().query('SELECT count() AS n FROM {db:Identifier}.hits WHERE site_id = {site:UUID}', { db: site.tenant, site: site.id })).toEqual([{ n: '0' }]);

    // What is compared is not empty: the seeded site has visits, Signup events and conversions.
    const answers = expected.stats as { kpis?: { visits: number }; rows?: { name: string; conversions: number }[] }[];
    const [overview, goals] = [answers[0], answers[STATS.indexOf(`goals/stats?${RANGE}`)]];
    expect(overview.kpis?.visits).toBe(seeded.counts.visits);
    expect(goals.rows?.find((row) => row.name === 'Pro signup')?.conversions).toBeGreaterThan(0);

    const written = await plumbSource.run([staged], ctx);
    expect(datasets(written)).toEqual(datasets(checked));
    expect(await tablesOf(site)).toEqual(expected.tables);
    expect(await statsOf(site)).toEqual(expected.stats);
    const stamped = await store().query<{ import_id: string; n: string }>(
      'SELECT import_id, count() AS n FROM {db:Identifier}.events WHERE site_id = {site:UUID} GROUP BY import_id',
      { db: site.tenant, site: site.id },
    );
    expect(stamped).toEqual([{ import_id: ctx.importId, n: String(seeded.counts.events) }]);

    // A run retried after a failure sends its batches again: each is stored once.
    await plumbSource.run([staged], ctx);
    expect(await tablesOf(site)).toEqual(expected.tables);
    await retire(site);
  }, 60_000);

  it('adds the takeout’s goals and funnels the site lacks, keeps those it has, and says which', async () => {
    const site = await targetSite();
    const recorded: string[] = [];
    const setup = importSetup(db(), owner, site.id, async (column, id) => void recorded.push(`${column}:${id}`));
    const manifest = await plumbSource.run([takeouts.get('json')!], { ...context(site), setup });
    const { rows: goals } = await db().query<{ id: string; name: string }>('SELECT id, name FROM goals WHERE site_id = $1 ORDER BY name', [site.id]);
    const { rows: funnels } = await db().query<{ id: string; name: string; steps: unknown }>('SELECT id, name, steps FROM funnels WHERE site_id = $1', [site.id]);
    const { rows: original } = await db().query<{ name: string; steps: unknown }>('SELECT name, steps FROM funnels WHERE site_id = $1', [seeded.site.id]);
    // The target had both goals already: only the funnel is new, and it is the takeout's.
    expect(goals.map((goal) => goal.name).sort()).toEqual(GOALS.map((goal) => goal.name).sort());
    expect(funnels.map(({ name, steps }) => ({ name, steps }))).toEqual(original);
    expect(recorded).toEqual(funnels.map((funnel) => `created_funnels:${funnel.id}`));
    expect(manifest.warnings).toContainEqual(expect.stringMatching(/already had goals named .*Pricing.*Pro signup|already had goals named .*Pro signup.*Pricing/));
    await retire(site);
  });

  it('refuses the takeout of a site of another domain, naming the manifest', async () => {
    const site = await targetSite('elsewhere.example');
    for (const format of ['csv', 'xlsx'] as const) {
      const staged = takeouts.get(format)!;
      const refusal = await plumbSource.validate([staged], context(site)).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ImportInputError);
      expect(refusal).toMatchObject({ file: format === 'csv' ? 'manifest.json' : `${staged.name}, sheet manifest` });
      expect((refusal as Error).message).toContain(`the takeout of ${DOMAIN}, not of elsewhere.example`);
    }
    await retire(site);
  });

  it('skips rows whose values do not fit their columns, with the reason and the line', async () => {
    const entries = await readZip(await import('node:fs').then((fs) => fs.readFileSync(takeouts.get('csv')!.path)));
    const pageviews = entries.get('pageviews.csv')!.toString();
    const lines = pageviews.trimEnd().split('\n');
    const good = lines[1];
    const fields = good.split(',');
    const badTime = ['"yesterday"', ...fields.slice(1)].join(',');
    const badId = [fields[0], '"-3"', ...fields.slice(2)].join(',');
    entries.set('pageviews.csv', Buffer.from(`${pageviews}${badTime}\n${badId}\n`));
    const site = await targetSite();
    const manifest = await plumbSource.validate([stage('edited.zip', await zipOf(entries))], context(site));
    expect(manifest.datasets.find((d) => d.name === 'pageviews')).toMatchObject({ rows_accepted: seeded.counts.pageviews, rows_skipped: 2 });
    const total = lines.length;
    expect(manifest.skipped).toEqual([
      { reason: 'timestamp column with a value that is not an ISO 8601 UTC time', count: 1, examples: [{ file: 'pageviews.csv', line: expect.any(Number), message: 'ts is "yesterday"' }] },
      { reason: 'int64 column with a value that is not a non-negative 64-bit integer', count: 1, examples: [{ file: 'pageviews.csv', line: expect.any(Number), message: 'session_id is "-3"' }] },
    ]);
    // The awkward path's quoted newline makes the file one line longer than its records.
    expect(manifest.skipped.map((s) => s.examples[0].line)).toEqual([total + 1, total + 2]);
    await retire(site);
  });

  it('refuses a manifest whose columns are not this Plumb’s, and a zip that is no takeout', async () => {
    const entries = await readZip(await import('node:fs').then((fs) => fs.readFileSync(takeouts.get('ndjson')!.path)));
    const manifest = JSON.parse(entries.get('manifest.json')!.toString());
    manifest.tables.find((table: { name: string }) => table.name === 'events').columns.pop();
    entries.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
    const site = await targetSite();
    await expect(plumbSource.validate([stage('changed.zip', await zipOf(entries))], context(site))).rejects.toThrow(/the columns of events are ts:timestamp.*; this Plumb's are/);
    entries.delete('manifest.json');
    await expect(plumbSource.validate([stage('no-manifest.zip', await zipOf(entries))], context(site))).rejects.toThrow('no manifest.json');
    await retire(site);
  });
});
