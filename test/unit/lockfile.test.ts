// `npm ci` on a fresh machine refuses a lock that lacks any optional platform binary.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { missingOptionalEntries, platformEntry } from '../../scripts/complete-lockfile.ts';

describe('package-lock.json', () => {
  it('has an entry for every optional dependency (run npm run lockfile:complete after npm install)', () => {
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8'));
    expect(missingOptionalEntries(lock.packages).map((m) => m.name)).toEqual([]);
  });
});

describe('platformEntry', () => {
  it('pins os, cpu and libc so npm skips the binary elsewhere', () => {
    expect(platformEntry('@biomejs/cli-linux-x64-musl', '2.6.8', true)).toEqual({ version: '2.6.8', optional: true, os: ['linux'], cpu: ['x64'], libc: ['musl'], dev: true });
    expect(platformEntry('@chdb/lib-darwin-arm64', '26.7.3-stable.1', false)).toEqual({ version: '26.7.3-stable.1', optional: true, os: ['darwin'], cpu: ['arm64'] });
  });
});
