// createSiteDirectory: the live site behind a hostname (every tracker request) or an id, cached for
// a while so ingest does not ask the metadata store each time, misses for a shorter while.
import { describe, expect, it } from '@jest/globals';
import { createSiteDirectory } from '../../lib/sites/sites.ts';
import type { MetadataQueryable } from '../../lib/stores/metadata/index.ts';

const SITE = { id: '0e6d2f1c-1111-4222-8333-444455556666', team_id: '9a1b2c3d-1111-4222-8333-444455556666', domain: 'example.com', timezone: 'Europe/Paris' };

/** A metadata store that knows one site, by its domain and its id, and counts the questions asked. */
function fakeStore() {
  const asked: unknown[][] = [];
  const db: MetadataQueryable = {
    async query<T>(_sql: string, params: unknown[] = []) {
      asked.push(params);
      const found = params[0] === SITE.domain || params[0] === SITE.id;
      return { rows: (found ? [SITE] : []) as T[], rowCount: found ? 1 : 0 } as never;
    },
  };
  return { db: () => db, asked };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createSiteDirectory', () => {
  it('answers a hostname or an id from its cache until the entry expires', async () => {
    const store = fakeStore();
    const sites = createSiteDirectory(store.db, { ttlMs: 80 });
    expect((await sites.byHostname('example.com'))?.id).toBe(SITE.id);
    expect((await sites.byHostname('example.com'))?.id).toBe(SITE.id);
    expect((await sites.byId(SITE.id))?.domain).toBe('example.com');
    expect((await sites.byId(SITE.id))?.domain).toBe('example.com');
    expect(store.asked).toEqual([['example.com'], [SITE.id]]);
    await pause(120);
    await sites.byHostname('example.com');
    expect(store.asked).toHaveLength(3);
  });

  it('answers a cached hostname at hand, and a miss or an expired entry as a promise', async () => {
    const sites = createSiteDirectory(fakeStore().db, { ttlMs: 80, missTtlMs: 80 });
    const asked = sites.byHostname('example.com');
    expect(asked).toBeInstanceOf(Promise);
    await asked;
    expect(sites.byHostname('example.com')).toMatchObject({ id: SITE.id, domain: 'example.com' });
    await sites.byHostname('unknown.example');
    expect(sites.byHostname('unknown.example')).toBeNull();
    await pause(120);
    expect(sites.byHostname('example.com')).toBeInstanceOf(Promise);
  });

  it('remembers an unknown hostname for the shorter miss time only', async () => {
    const store = fakeStore();
    const sites = createSiteDirectory(store.db, { ttlMs: 10_000, missTtlMs: 50 });
    expect(await sites.byHostname('unknown.example')).toBeNull();
    expect(await sites.byHostname('unknown.example')).toBeNull();
    expect(store.asked).toHaveLength(1);
    await pause(80);
    expect(await sites.byHostname('unknown.example')).toBeNull();
    expect(store.asked).toHaveLength(2);
  });

  it('keeps hostnames and ids apart: an id asked as a hostname is asked of the store as one', async () => {
    const store = fakeStore();
    const sites = createSiteDirectory(store.db);
    await sites.byId(SITE.id);
    await sites.byHostname(SITE.id);
    await sites.byHostname('example.com');
    await sites.byId('example.com');
    expect(store.asked).toEqual([[SITE.id], [SITE.id], ['example.com'], ['example.com']]);
  });

  it('forgets everything when invalidated, and its oldest entries once full', async () => {
    const store = fakeStore();
    const sites = createSiteDirectory(store.db, { maxEntries: 2 });
    await sites.byHostname('example.com');
    await sites.byId(SITE.id);
    sites.invalidate();
    await sites.byHostname('example.com');
    await sites.byId(SITE.id);
    expect(store.asked).toHaveLength(4);
    await sites.byHostname('a.example');
    await sites.byHostname('b.example');
    // Two hostnames since example.com: it went first.
    await sites.byHostname('example.com');
    expect(store.asked).toHaveLength(7);
  });
});
