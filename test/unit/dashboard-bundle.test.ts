// The dashboard's budget: the JavaScript a first visit loads (the entry chunk and everything it
// imports statically) is at most 250 KB gzipped. Pages and the chart library are separate chunks
// loaded on demand, and nothing in the build points at another host.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NODE_BIN, ROOT } from '../support/instance.ts';

const BUDGET = 250 * 1024;

/** The entry script and, transitively, the chunks it imports statically (dynamic import() is on demand). */
function initialScripts(outDir: string, html: string): string[] {
  const entry = /<script type="module"[^>]*src="\/([^"]+)"/.exec(html)?.[1];
  if (!entry) throw new Error('no module script in index.html');
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(outDir, file), 'utf8');
    const dir = file.slice(0, file.lastIndexOf('/') + 1);
    for (const match of code.matchAll(/(?:\bfrom|\bimport)\s*["']\.\/([^"']+\.js)["']/g)) visit(`${dir}${match[1]}`);
  };
  visit(entry);
  for (const match of html.matchAll(/<link rel="modulepreload"[^>]*href="\/([^"]+)"/g)) visit(match[1]);
  return [...seen];
}

describe('dashboard bundle', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'plumb-web-'));
  let html: string;
  let initial: string[];

  beforeAll(() => {
    // Vite's bundler checks its plugins across realms, which jest's VM modules break: build in a child.
    const script = `import { build } from 'vite'; await build({ configFile: ${JSON.stringify(join(ROOT, 'web/vite.config.ts'))}, logLevel: 'error', build: { outDir: ${JSON.stringify(outDir)}, emptyOutDir: true } });`;
    // Jest sets NODE_ENV=test, which would make Vite bundle React's development build.
    const env = { ...process.env, NODE_ENV: 'production' };
    const built = spawnSync(NODE_BIN, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env });
    if (built.status !== 0) throw new Error(`vite build failed:\n${built.stderr}`);
    html = readFileSync(join(outDir, 'index.html'), 'utf8');
    initial = initialScripts(outDir, html);
  }, 120_000);
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('loads at most 250 KB of gzipped JavaScript on the first visit', () => {
    const sizes = initial.map((file) => ({ file, gzip: gzipSync(readFileSync(join(outDir, file)), { level: 9 }).length }));
    const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
    console.log(`dashboard initial JS: ${sizes.map((s) => `${s.file} ${s.gzip} B`).join(', ')}; total ${total} bytes gzipped, budget ${BUDGET}`);
    expect(total).toBeGreaterThan(10_000);
    expect(total).toBeLessThanOrEqual(BUDGET);
  });

  it('keeps the pages and the chart library out of the first load', () => {
    const initialCode = initial.map((file) => readFileSync(join(outDir, file), 'utf8')).join('\n');
    // uPlot's own class name and a page's unique text only exist in their lazy chunks.
    expect(initialCode).not.toContain('uplot');
    expect(initialCode).not.toContain('Create owner account');
    expect(initialCode).toContain('import(');
  });

  it('references no other host', () => {
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});
