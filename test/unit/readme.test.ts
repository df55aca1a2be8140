// The README is for operators: its settings table must be the one the loader reads.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { settingsTable } from '../../scripts/settings-table.ts';

describe('README', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  it('documents every setting exactly as lib/config.ts declares it', () => {
    const table = /<!-- settings table[^\n]*-->\n([\s\S]*?)\n<!-- end of settings table -->/.exec(readme)?.[1];
    expect(table).toBe(settingsTable());
  });

  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
  });
});
