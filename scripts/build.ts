// Builds what the instance serves: the dashboard (Vite → dist/web), the tracking script and its
// web-vitals add-on (esbuild, minified → dist/tracker). Run by `npm ci` (prepare) and `npm run build`.
import { build as vite } from 'vite';
import { buildTrackerBundles } from './build-tracker.ts';

const root = new URL('..', import.meta.url).pathname;

async function buildDashboard() {
  await vite({ configFile: `${root}web/vite.config.ts`, logLevel: 'warn' });
}

const started = performance.now();
await Promise.all([buildTrackerBundles(`${root}dist/tracker`), buildDashboard()]);
console.log(`plumb: built dashboard and tracker in ${Math.round(performance.now() - started)} ms`);
