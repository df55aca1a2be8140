// Builds what the instance serves: the dashboard (Vite → dist/web) and the tracking script
// (esbuild, minified → dist/tracker). Run by `npm ci` (prepare) and `npm run build`.
import { mkdirSync } from 'node:fs';
import { build as esbuild } from 'esbuild';
import { build as vite } from 'vite';

const root = new URL('..', import.meta.url).pathname;

async function buildTracker() {
  mkdirSync(`${root}dist/tracker`, { recursive: true });
  await esbuild({
    entryPoints: [`${root}tracker/src/plumb.ts`],
    outfile: `${root}dist/tracker/plumb.js`,
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2019'],
    legalComments: 'none',
    logLevel: 'warning',
  });
}

async function buildDashboard() {
  await vite({ configFile: `${root}web/vite.config.ts`, logLevel: 'warn' });
}

const started = performance.now();
await Promise.all([buildTracker(), buildDashboard()]);
console.log(`plumb: built dashboard and tracker in ${Math.round(performance.now() - started)} ms`);
