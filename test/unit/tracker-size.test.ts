// The tracking script's budget (≤ 1,536 bytes gzipped at level 9) and its privacy by construction:
// the built bundle contains no code that writes cookies or storage.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildTrackerBundles } from '../../scripts/build-tracker.ts';

describe('tracker bundles', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'plumb-tracker-'));
  let bundles: { tracker: string; vitals: string };

  beforeAll(async () => {
    bundles = await buildTrackerBundles(outDir);
  });
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('plumb.js is at most 1,536 bytes gzipped at level 9', () => {
    const gzipped = gzipSync(bundles.tracker, { level: 9 }).length;
    console.log(`plumb.js: ${Buffer.byteLength(bundles.tracker)} bytes minified, ${gzipped} bytes gzipped (-9), budget 1536`);
    expect(gzipped).toBeLessThanOrEqual(1536);
  });

  it('writes plumb.js and plumb-vitals.js into the output directory, as returned', () => {
    expect(readFileSync(join(outDir, 'plumb.js'), 'utf8')).toBe(bundles.tracker);
    expect(readFileSync(join(outDir, 'plumb-vitals.js'), 'utf8')).toBe(bundles.vitals);
  });

  it.each(['document.cookie', 'localStorage.setItem', 'sessionStorage'])('neither bundle contains %s', (needle) => {
    expect(bundles.tracker).not.toContain(needle);
    expect(bundles.vitals).not.toContain(needle);
  });

  it('the vitals add-on bundles web-vitals and posts to /ingest/web-vitals', () => {
    expect(bundles.vitals).toContain('/ingest/web-vitals');
    expect(bundles.vitals).toContain('largest-contentful-paint');
    expect(bundles.tracker).not.toContain('largest-contentful-paint');
  });
});
