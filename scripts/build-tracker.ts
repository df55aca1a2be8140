// Builds the tracking script (tracker/src/plumb.ts → plumb.js) and its web-vitals add-on
// (tracker/src/vitals.ts → plumb-vitals.js) with esbuild: minified IIFEs for es2019 browsers.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const SRC = new URL('../tracker/src/', import.meta.url).pathname;

async function bundle(entry: string, outFile: string): Promise<string> {
  const result = await build({
    entryPoints: [join(SRC, entry)],
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2019'],
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
  });
  const code = result.outputFiles[0].text;
  writeFileSync(outFile, code);
  return code;
}

/** Writes plumb.js and plumb-vitals.js into outDir and returns their code. */
export async function buildTrackerBundles(outDir: string): Promise<{ tracker: string; vitals: string }> {
  mkdirSync(outDir, { recursive: true });
  const [tracker, vitals] = await Promise.all([bundle('plumb.ts', join(outDir, 'plumb.js')), bundle('vitals.ts', join(outDir, 'plumb-vitals.js'))]);
  return { tracker, vitals };
}
