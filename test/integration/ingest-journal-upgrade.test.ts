// A journal written before row layouts (every row a JSON object: `{"table":…,"team":…,"row":{…}}`)
// is what an operator's disk holds when they upgrade. Reopened by this version, with records of
// its own appended after the old ones, it replays into the analytics store as if one version had
// written it all: every hit once, and the visit's states cancelled but the last.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJournal } from '../../lib/ingest/journal.ts';
import { type IngestDeps, type JournalRecord, trackerPageview } from '../../lib/ingest/pipeline.ts';
import { ENCODED_RECORD_CODEC, type EncodedRecord, encodeRecord } from '../../lib/ingest/sink.ts';
import { createVisitTracker } from '../../lib/ingest/visit-tracker.ts';
import { createIngestWriter } from '../../lib/ingest/writer.ts';
import { silentLog } from '../../lib/log.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import type { Site } from '../../lib/sites/sites.ts';

const TEAM = '4b7c1d2e-3f40-4a51-8b62-7c83d94ea5f6';
const SITE: Site = { id: '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a', team_id: TEAM, domain: 'upgrade.example', timezone: 'UTC', tenant: 'tenant_x' };
const REQUEST = { ip: '193.0.6.139', userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', origin: 'https://upgrade.example', headers: {} };

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

/** The records of one visitor's pageviews of `paths`, one append's worth each, as the pipeline makes them. */
async function pageviews(paths: string[]): Promise<JournalRecord[][]> {
  const appends: JournalRecord[][] = [];
  const deps: IngestDeps = {
    geo: { lookup: () => ({ country: 'NL', region: '' }), close() {} },
    salts: { forTime: async () => new Uint8Array(32).fill(3), prune: async () => 0 },
    visits: createVisitTracker({ timeoutMs: 30 * 60_000 }),
    sites: { byHostname: async () => SITE, byId: async () => SITE, invalidate() {} },
    rejections: { count() {}, flush: async () => {} },
    journal: {
      async append(records) {
        appends.push([...records]);
      },
    },
    appended() {},
  };
  for (const path of paths) await trackerPageview(deps, { url: `https://upgrade.example${path}`, referrer: 'https://www.google.com/', width: 390 }, REQUEST);
  return appends;
}

describe('an ingest journal written before row layouts', () => {
  it('replays into the store with the records appended after the upgrade: every hit once, one visit of all its pageviews', async () => {
    const root = await mkdtemp(join(tmpdir(), 'plumb-journal-upgrade-'));
    roots.push(root);
    const dir = join(root, 'journal');
    const [first, second, third, fourth] = await pageviews(['/a', '/b', '/c', '/d']);

    // The old version's journal: each record is the JSON of the record itself.
    const old = await openJournal<JournalRecord>({ dir, log: silentLog, fsync: false });
    for (const records of [first, second, third]) await old.append(records);
    await old.close();
    const onDisk = await openJournal<EncodedRecord>({ dir, log: silentLog, fsync: false, codec: ENCODED_RECORD_CODEC });
    const replayed = await onDisk.next(100);
    expect(replayed!.records.map((record) => record.layout)).toEqual([...first, ...second, ...third].map(() => undefined));
    await onDisk.close();

    // This version reopens it and appends a pageview of the same visit in the layouts.
    const journal = await openJournal<EncodedRecord>({ dir, log: silentLog, fsync: false, codec: ENCODED_RECORD_CODEC });
    await journal.append(fourth.map(encodeRecord));
    const analytics = await openAnalyticsStore({ dataDir: root, log: silentLog });
    try {
      // Batches of two records: cancellations by reference land in a batch after their state's,
      // whichever format either was journaled in.
      const writer = createIngestWriter({ journal, analytics: () => analytics, log: silentLog, batchSize: 2, flushMs: 5 });
      writer.start();
      await writer.stop(30_000);
      expect(journal.pendingRecords()).toBe(0);
      const db = analytics.tenantDatabase(TEAM);
      expect(await analytics.query('SELECT path, screen_width, country, referrer_source FROM {db:Identifier}.hits ORDER BY ts, path', { db })).toEqual(
        ['/a', '/b', '/c', '/d'].map((path) => ({ path, screen_width: 390, country: 'NL', referrer_source: 'Google' })),
      );
      expect(
        await analytics.query('SELECT sum(sign) AS visits, sum(sign * visit_pageviews) AS pageviews, groupUniqArrayArray(pages) AS pages FROM {db:Identifier}.visits WHERE sign = 1 OR sign = -1', { db }),
      ).toEqual([{ visits: '1', pageviews: '4', pages: expect.arrayContaining(['/a', '/b', '/c', '/d']) }]);
      const last = await analytics.query('SELECT version, visit_pageviews, entry_page, exit_page FROM {db:Identifier}.visits FINAL', { db });
      expect(last).toEqual([{ version: 4, visit_pageviews: 4, entry_page: '/a', exit_page: '/d' }]);
    } finally {
      await journal.close();
      await analytics.close();
    }
  }, 60_000);
});
