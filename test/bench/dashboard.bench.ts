// Dashboard queries on a large data set (default 10 million rows over 90 days, `--dataset 1m` for
// less): the full 30-day dashboard load, exactly the requests the dashboard sends and in its order
// (the range's stats with KPIs and chart, then at once the first tab of every breakdown panel and
// the goal conversions; once the stats are in, the previous period's KPIs and chart), and each event-analytics
// endpoint, timed over HTTP against `plumb serve` on the embedded stores, with the server's RSS.
import { rmSync } from 'node:fs';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { createUser } from '../../lib/users/users.ts';
import { startInstance, tempDataDir } from '../support/instance.ts';
import { datasetSize, generateDataset } from './dataset.ts';
import { percentile, rssMiB } from './measure.ts';
import { PANELS } from '../../web/src/dashboard/panels.ts';
import type { BenchSuite } from './run.ts';

const RUNS = 20;
/** What the dashboard shows first: each panel's first tab. */
const FIRST_TABS = PANELS.map((panel) => panel.tabs[0].dimension);

/**
 * The full dashboard load of a range, as the dashboard sends it: the range's stats with KPIs and
 * chart, then at once the first tab of every breakdown panel and the goal conversions; once the
 * stats are in, the previous period's KPIs and chart. `get` fetches a path under the site's API.
 */
export async function dashboardLoad(get: (path: string) => Promise<Record<string, unknown>>, range: string): Promise<void> {
  const statsAndPrevious = (async () => {
    const stats = await get(`/stats?${range}`);
    const current = stats.range as { from: string; to: string; interval: string };
    const start = Date.parse(current.from);
    // As the dashboard asks: the previous period's KPIs and its line on the chart, in the range's interval.
    const previous = new URLSearchParams({ from: new Date(2 * start - Date.parse(current.to)).toISOString(), to: current.from, interval: current.interval });
    await get(`/stats?${previous}`);
  })();
  await Promise.all([statsAndPrevious, ...FIRST_TABS.map((dimension) => get(`/stats/breakdown?${range}&dimension=${dimension}&limit=10`)), get(`/goals/stats?${range}`)]);
}

const suite: BenchSuite = {
  name: 'dashboard',
  description: 'dashboard load and event analytics on a generated data set (default 10 million rows, 90 days)',
  async run(args) {
    const rows = datasetSize(args, 10_000_000);
    const dataDir = tempDataDir('plumb-bench-dashboard-');
    const metadata = await openMetadataStore({ dataDir, log: silentLog });
    const team = await createTeam(metadata, { name: 'bench' });
    const site = await createSite(metadata, { teamId: team.id, domain: 'bench.example' });
    const password = 'benchmark password';
    const owner = await createUser(metadata, { email: 'bench@example.com', password, role: 'owner' });
    await metadata.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'owner')", [team.id, owner.id]);
    await metadata.close();

    const analytics = await openAnalyticsStore({ dataDir, log: silentLog });
    const generated = await generateDataset(analytics, { rows, days: 90, siteId: site.id, teamId: team.id, end: new Date() });
    await analytics.close();

    const plumb = await startInstance({ dataDir, env: { PLUMB_LOG_LEVEL: 'warn', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' } });
    try {
      const login = await fetch(`${plumb.url}/api/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'bench@example.com', password }),
      });
      const cookie = login.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const get = async (path: string) => {
        const res = await fetch(`${plumb.url}/api/sites/${site.id}${path}`, { headers: { Cookie: cookie } });
        const body = await res.text();
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.slice(0, 300)}`);
        return JSON.parse(body) as Record<string, unknown>;
      };
      let peakRss = 0;
      const sampler = setInterval(() => {
        rssMiB(plumb.child.pid!).then((mib) => (peakRss = Math.max(peakRss, mib)), () => undefined);
      }, 200);

      const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
      const range = `from=${from}`;
      const dashboard = () => dashboardLoad(get, range);
      const time = async (fn: () => Promise<unknown>) => {
        await fn();
        const times: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const started = performance.now();
          await fn();
          times.push(performance.now() - started);
        }
        return times;
      };

      const figures: Record<string, string | number> = {
        'rows generated (hits + events)': `${generated.hits + generated.events} in ${Math.round(generated.ms / 1000)} s`,
      };
      const full = await time(dashboard);
      figures['full dashboard load p50 / p95 (ms)'] = `${Math.round(percentile(full, 50))} / ${Math.round(percentile(full, 95))}`;
      const filtered = await time(() =>
        Promise.all([get(`/stats?${range}&filter=country:is:DE`), ...FIRST_TABS.map((p) => get(`/stats/breakdown?${range}&dimension=${p}&filter=country:is:DE&limit=10`))]),
      );
      figures['dashboard with a filter p50 (ms)'] = Math.round(percentile(filtered, 50));
      // The load as this benchmark defined it before it followed the dashboard: KPIs with comparison
      // and ten panels, all at once. Kept so figures stay comparable across versions.
      const TEN_PANELS = ['pages', 'entry_pages', 'exit_pages', 'sources', 'channels', 'countries', 'devices', 'browsers', 'os', 'utm_source'];
      const tenPanels = await time(() =>
        Promise.all([get(`/stats?${range}&compare=previous_period`), ...TEN_PANELS.map((p) => get(`/stats/breakdown?${range}&dimension=${p}&limit=10`))]),
      );
      figures['KPIs with comparison + ten panels at once p50 (ms)'] = Math.round(percentile(tenPanels, 50));
      const events: [string, string][] = [
        ['names', `/events/names?${range}`],
        ['properties', `/events/properties?${range}&event_name=Signup`],
        ['breakdown', `/events/breakdown?${range}&event_name=Signup&property_key=plan`],
        ['timeseries', `/events/timeseries?${range}&event_name=Signup&property_key=plan&property_value=pro`],
        ['audience', `/events/audience?${range}&event_name=Signup&dimension_key=country&dimension_value=DE`],
      ];
      for (const [name, path] of events) figures[`events/${name} p50 (ms)`] = Math.round(percentile(await time(() => get(path)), 50));
      clearInterval(sampler);
      figures['peak RSS of plumb serve (MiB)'] = peakRss.toFixed(0);
      return figures;
    } finally {
      await plumb.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

export default suite;
