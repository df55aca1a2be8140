// First dashboard render after login, in Chromium, on a generated data set (default 10 million
// rows over 90 days, `--dataset 1m` for less): a person opens a site's dashboard link, is sent to
// the login screen, signs in, and waits for the KPI cards and the chart. Timed from the
// sign-in request to both being on screen (and, separately, to every breakdown panel having rows),
// each run in a fresh browser context (cold cache: shell, chunks and font loaded anew).
import { rmSync } from 'node:fs';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { createUser } from '../../lib/users/users.ts';
import { launchChromium } from '../support/browser.ts';
import { startInstance, tempDataDir } from '../support/instance.ts';
import { datasetSize, generateDataset } from './dataset.ts';
import { percentile } from './measure.ts';
import type { BenchSuite } from './run.ts';

const RUNS = 7;
const TARGET_MS = 1000;

const suite: BenchSuite = {
  name: 'dashboard-render',
  description: 'first dashboard render after login in Chromium (KPI cards and chart) on a generated data set (default 10 million rows)',
  async run(args) {
    const rows = datasetSize(args, 10_000_000);
    const dataDir = tempDataDir('plumb-bench-render-');
    const email = 'bench@example.com';
    const password = 'benchmark password';
    const metadata = await openMetadataStore({ dataDir, log: silentLog });
    const team = await createTeam(metadata, { name: 'bench' });
    const site = await createSite(metadata, { teamId: team.id, domain: 'bench.example' });
    const owner = await createUser(metadata, { email, password, role: 'owner' });
    await metadata.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'owner')", [team.id, owner.id]);
    await metadata.close();

    const analytics = await openAnalyticsStore({ dataDir, log: silentLog });
    const generated = await generateDataset(analytics, { rows, days: 90, siteId: site.id, teamId: team.id, end: new Date() });
    await analytics.close();

    const plumb = await startInstance({
      dataDir,
      // Each run signs in once; the strict login bucket is not what is measured.
      env: { PLUMB_LOG_LEVEL: 'warn', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000', PLUMB_LOGIN_RATE_PER_MINUTE: '1000', PLUMB_LOGIN_BURST: '1000' },
    });
    const browser = await launchChromium();
    try {
      const render: number[] = [];
      const panels: number[] = [];
      const statsRequests: number[] = [];
      // The first run also warms the server's caches and chDB's page cache; it is not counted.
      for (let run = 0; run <= RUNS; run++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        let statsMs = 0;
        // How long the KPI request itself took, from sending to the last byte: the server's share.
        page.on('requestfinished', (request) => {
          if (new URL(request.url()).pathname === `/api/sites/${site.id}/stats`) statsMs = request.timing().responseEnd - request.timing().requestStart;
        });
        await page.goto(`${plumb.url}/sites/${site.id}`);
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(password);
        // Timed inside the page, on its own clock, so the driver's overhead is not counted: from the
        // moment the sign-in request leaves to the first frame with the KPI cards and the chart in
        // it, and to the first frame with rows in every breakdown panel.
        const timings = page.evaluate(
          () =>
            new Promise<{ rendered: number; settled: number }>((resolve) => {
              let rendered = 0;
              const check = () => {
                const now = performance.now();
                if (!rendered && document.querySelector('[data-testid="kpis"] [data-kpi="visitors"]') && document.querySelector('[data-testid="chart"] canvas')) rendered = now;
                const panels = [...document.querySelectorAll('[data-panel]')];
                if (rendered && panels.length === 5 && panels.every((p) => p.querySelector('.rows li'))) {
                  const login = performance.getEntriesByType('resource').find((e) => e.name.endsWith('/api/login'));
                  resolve({ rendered: rendered - (login?.startTime ?? 0), settled: now - (login?.startTime ?? 0) });
                } else requestAnimationFrame(check);
              };
              requestAnimationFrame(check);
            }),
        );
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        const { rendered, settled } = await timings;
        if (run > 0) {
          render.push(rendered);
          panels.push(settled);
          statsRequests.push(statsMs);
        }
        await context.close();
      }
      const p50 = percentile(render, 50);
      return {
        'rows generated (hits + events)': `${generated.hits + generated.events} in ${Math.round(generated.ms / 1000)} s`,
        'sign-in → KPIs and chart p50 / p95 (ms)': `${Math.round(p50)} / ${Math.round(percentile(render, 95))}`,
        'of which the stats request p50 (ms)': Math.round(percentile(statsRequests, 50)),
        'sign-in → all breakdown panels p50 (ms)': Math.round(percentile(panels, 50)),
        [`target ≤ ${TARGET_MS} ms`]: p50 <= TARGET_MS ? 'met' : 'not met',
      };
    } finally {
      await browser.close();
      await plumb.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

export default suite;
