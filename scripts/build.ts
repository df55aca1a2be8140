// Builds what the instance serves: the dashboard (Vite → dist/web), the tracking script and its
// web-vitals add-on (esbuild, minified → dist/tracker); and fills Node's compile cache with the
// node's modules, so that even the first `plumb serve` after an install runs without loading the
// TypeScript stripper (lib/process-settings.ts). Run by `npm ci` (prepare) and `npm run build`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { build as vite } from 'vite';
import { COMPILE_CACHE_DIR } from '../lib/process-settings.ts';
import { buildTrackerBundles } from './build-tracker.ts';

const root = new URL('..', import.meta.url).pathname;

async function buildDashboard() {
  await vite({ configFile: `${root}web/vite.config.ts`, logLevel: 'warn' });
}

/** Loads the node's modules (without starting anything) in a process that writes them to the compile cache as it exits. */
async function fillCompileCache() {
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(`${root}lib/node.ts`)})`], {
    env: { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE_DIR },
  });
}

const started = performance.now();
await Promise.all([buildTrackerBundles(`${root}dist/tracker`), buildDashboard(), fillCompileCache()]);
console.log(`plumb: built dashboard and tracker in ${Math.round(performance.now() - started)} ms`);
