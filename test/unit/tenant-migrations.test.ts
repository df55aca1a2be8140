// The tenant (analytics) migration files follow the same rules as the metadata ones: numbered
// NNNN_snake_case.sql files in version order, and a misnamed file or a repeated version stops
// start-up, named, rather than being skipped.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadMigrations } from '../../lib/stores/analytics/migrations.ts';
import { ANALYTICS_MIGRATIONS } from '../support/migration-files.ts';

function migrationsDir(files: Record<string, string>): URL {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-tenant-migrations-'));
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return pathToFileURL(`${dir}/`);
}

describe('tenant migrations', () => {
  it('ships numbered files, read in version order', () => {
    expect(loadMigrations().map((m) => ({ version: m.version, name: m.name }))).toEqual(
      ANALYTICS_MIGRATIONS.map((m) => ({ version: m.version, name: m.file.slice(0, -4) })),
    );
  });

  it('orders by number, not by text, and ignores files that are not .sql', () => {
    const dir = migrationsDir({ '10000_later.sql': 'SELECT 3;', '0002_second.sql': 'SELECT 2;', '0001_first.sql': 'SELECT 1;', 'README.md': '# notes' });
    expect(loadMigrations(dir).map((m) => m.name)).toEqual(['0001_first', '0002_second', '10000_later']);
  });

  it('refuses a misnamed .sql file, naming it', () => {
    expect(() => loadMigrations(migrationsDir({ '0001_first.sql': 'SELECT 1;', '2-visits.sql': 'SELECT 2;' }))).toThrow(
      'tenant migration 2-visits.sql: name must look like 0001_snake_case_name.sql',
    );
  });

  it('refuses two files with one version, naming both', () => {
    expect(() => loadMigrations(migrationsDir({ '0001_first.sql': 'SELECT 1;', '0001_other.sql': 'SELECT 2;' }))).toThrow(
      /tenant migrations 0001_\w+\.sql and 0001_\w+\.sql share version 0001: each version must be unique/,
    );
  });
});
