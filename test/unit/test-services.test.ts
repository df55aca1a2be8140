// The test suites, CI and the README name each local test service's override one way: the name
// test/support/services.ts reads, so pointing the tests at another PostgreSQL works everywhere.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { LOCAL_SERVICES, POSTGRES_URL_ENV } from '../support/services.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Every file of the test suites and CI, and the README. */
function files(): string[] {
  const tests = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|cjs|js)$/.test(file))
    .map((file) => join('test', file))
    .filter((file) => file !== 'test/unit/test-services.test.ts');
  return [...tests, '.ci/run', 'README.md', 'package.json'];
}

describe('test service settings', () => {
  it('read the test PostgreSQL from PLUMB_TEST_DATABASE_URL', () => {
    expect(POSTGRES_URL_ENV).toBe('PLUMB_TEST_DATABASE_URL');
    expect(LOCAL_SERVICES.find((service) => service.name === 'PostgreSQL')?.env).toBe('PLUMB_TEST_DATABASE_URL');
  });

  it('are named nowhere by another name', () => {
    const known = new Set([...LOCAL_SERVICES.map((service) => service.env), 'PLUMB_CHROMIUM']);
    const unknown = files().flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\b(PLUMB_TEST_[A-Z_]+|TEST_(?:DATABASE|POSTGRES|PG)[A-Z_]*|PGHOST|PGDATABASE)\b/g)]
        .map((match) => match[1])
        .filter((name) => !known.has(name))
        .map((name) => `${file}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});
