// The README is for operators: its settings table must be the one the loader reads.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { settingsTable } from '../../scripts/settings-table.ts';

describe('README', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  it('documents every setting exactly as lib/config.ts declares it', () => {
    const table = /<!-- settings table[^\n]*-->\n([\s\S]*?)\n<!-- end of settings table -->/.exec(readme)?.[1];
    expect(table).toBe(settingsTable());
  });

  it('opens with the quick start: the two set-up commands first', () => {
    const firstSection = /^## (.+)$/m.exec(readme)?.[1];
    expect(firstSection).toBe('Quick start');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
    expect(quickStart).toContain('npm ci && npm start');
    expect(quickStart).toContain('npm ci && npm test');
    expect(quickStart).toContain('npx plumb --help');
  });

  it('links benchmarks and architecture in docs/, and every relative link resolves', () => {
    expect(readme).toContain('(docs/benchmarks.md)');
    expect(readme).toContain('(docs/architecture.md)');
    const root = new URL('../../', import.meta.url).pathname;
    for (const doc of ['README.md', 'docs/architecture.md', 'docs/benchmarks.md', 'docs/decisions.md']) {
      const text = readFileSync(join(root, doc), 'utf8');
      const links = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]).filter((link) => !/^[a-z]+:/.test(link));
      for (const link of links) expect({ doc, link, exists: existsSync(join(root, dirname(doc), link)) }).toEqual({ doc, link, exists: true });
    }
  });
});
