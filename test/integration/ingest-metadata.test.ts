// The ingest pipeline's metadata: daily salts shared through the store and pruned after two days,
// refused-request counts written in bulk, and AI-fetch idempotency keys expired after a day.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { silentLog } from '../../lib/log.ts';
import { pruneIdempotencyKeys } from '../../lib/ingest/idempotency.ts';
import { createRejectionCounter } from '../../lib/ingest/rejections.ts';
import { createSaltRing } from '../../lib/ingest/salts.ts';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { type MetadataStore, openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { tempDataDirWithPglite } from '../support/instance.ts';

let dataDir: string;
let store: MetadataStore;

beforeAll(async () => {
  dataDir = await tempDataDirWithPglite('plumb-ingest-meta-');
  store = await openMetadataStore({ dataDir, log: silentLog });
});

afterAll(async () => {
  await store?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('createSaltRing', () => {
  it('gives one salt per UTC day, the same to every node', async () => {
    const nodeA = createSaltRing(() => store);
    const nodeB = createSaltRing(() => store);
    const morning = await nodeA.forTime(new Date('2026-11-20T01:00:00Z'));
    const evening = await nodeB.forTime(new Date('2026-11-20T23:59:00Z'));
    const nextDay = await nodeA.forTime(new Date('2026-11-21T00:00:00Z'));
    expect(Buffer.from(evening)).toEqual(Buffer.from(morning));
    expect(Buffer.from(nextDay)).not.toEqual(Buffer.from(morning));
    expect(morning.length).toBe(32);
  });

  it('deletes salts older than yesterday', async () => {
    const ring = createSaltRing(() => store);
    await ring.forTime(new Date('2026-11-18T12:00:00Z'));
    await ring.forTime(new Date('2026-11-19T12:00:00Z'));
    await ring.forTime(new Date('2026-11-21T12:00:00Z'));
    await ring.prune(new Date('2026-11-21T12:00:00Z'));
    const { rows } = await store.query<{ day: string }>("SELECT to_char(day, 'YYYY-MM-DD') AS day FROM visitor_salts ORDER BY day");
    expect(rows.map((r) => r.day)).toEqual(['2026-11-20', '2026-11-21']);
  });

  it("answers a day's salt at hand once loaded: the same bytes, until the day is pruned", async () => {
    const ring = createSaltRing(() => store);
    const day = new Date('2026-11-22T08:00:00Z');
    const loading = ring.forTime(day);
    expect(loading).toBeInstanceOf(Promise);
    const salt = await loading;
    // The same object all day: visitor ids keep their HMAC key by it.
    expect(ring.forTime(new Date('2026-11-22T20:00:00Z'))).toBe(salt);
    await ring.prune(new Date('2026-11-25T00:00:00Z'));
    expect(ring.forTime(day)).toBeInstanceOf(Promise);
  });

  it('loads a salt again after a failed load', async () => {
    let failing = true;
    const ring = createSaltRing(() => (failing ? { query: async () => Promise.reject(new Error('store down')) } : store) as typeof store);
    await expect(ring.forTime(new Date('2026-11-23T08:00:00Z'))).rejects.toThrow('store down');
    failing = false;
    const salt = await ring.forTime(new Date('2026-11-23T09:00:00Z'));
    expect(salt).toHaveLength(32);
    expect(ring.forTime(new Date('2026-11-23T10:00:00Z'))).toBe(salt);
  });
});

describe('createRejectionCounter', () => {
  it('adds counts per site, day and reason in one flush, and skips deleted sites', async () => {
    const team = await createTeam(store, { name: 't' });
    const site = await createSite(store, { teamId: team.id, domain: 'counted.example' });
    const counter = createRejectionCounter(() => store);
    const day = new Date('2026-11-21T10:00:00Z');
    counter.count(site.id, 'bot', day);
    counter.count(site.id, 'bot', day);
    counter.count(site.id, 'bot', new Date('2026-11-22T10:00:00Z'));
    counter.count('00000000-0000-4000-8000-000000000000', 'bot', day);
    await counter.flush();
    counter.count(site.id, 'bot', day);
    await counter.flush();
    const { rows } = await store.query<{ day: string; count: number }>(
      "SELECT to_char(day, 'YYYY-MM-DD') AS day, count FROM ingest_rejections WHERE site_id = $1 AND reason = 'bot' ORDER BY day",
      [site.id],
    );
    expect(rows).toEqual([
      { day: '2026-11-21', count: 3 },
      { day: '2026-11-22', count: 1 },
    ]);
  });
});

describe('pruneIdempotencyKeys', () => {
  it('deletes the AI-fetch idempotency keys older than 24 hours and keeps the others', async () => {
    const team = await createTeam(store, { name: 'keys' });
    const site = await createSite(store, { teamId: team.id, domain: 'keys.example' });
    for (const [key, age] of [
      ['fresh', '1 minute'],
      ['almost-a-day', '23 hours 59 minutes'],
      ['old', '24 hours 1 minute'],
    ]) {
      await store.query(`INSERT INTO idempotency_keys (site_id, key, fingerprint, answer, created_at) VALUES ($1, $2, 'f', '{"accepted":1}', now() - $3::interval)`, [site.id, key, age]);
    }
    expect(await pruneIdempotencyKeys(store)).toBe(1);
    const { rows } = await store.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE site_id = $1 ORDER BY key', [site.id]);
    expect(rows.map((r) => r.key)).toEqual(['almost-a-day', 'fresh']);
  });
});
