// A journal written before row layouts (every row a JSON object: `{"table":…,"team":…,"row":{…}}`),
// when each hit was journaled with its visit's rows, is what an operator's disk holds when they
// upgrade. Reopened by this version, with records of its own appended after the old ones (hits
// alone, whose visits the writer derives), it replays into the analytics store as if one version
// had written it all: every hit once, and each visit's states cancelled but the last.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJournal } from '../../lib/ingest/journal.ts';
import { type IngestDeps, type JournalRecord, trackerPageview } from '../../lib/ingest/pipeline.ts';
import { ENCODED_RECORD_CODEC, type EncodedRecord, encodeRecord } from '../../lib/ingest/sink.ts';
import { createVisitTracker } from '../../lib/ingest/visit-tracker.ts';
import { type VisitState, visitRow, withPageview } from '../../lib/ingest/visits.ts';
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
async function pageviews(paths: string[], ip = REQUEST.ip): Promise<JournalRecord[][]> {
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
  for (const path of paths) await trackerPageview(deps, { url: `https://upgrade.example${path}`, referrer: 'https://www.google.com/', width: 390 }, { ...REQUEST, ip });
  return appends;
}

/**
 * The same appends as an earlier version journaled them: each hit followed by its visit's new
 * state and, from the second on, the cancellation of the state before by reference.
 */
function asJournaledBefore(appends: JournalRecord[][]): JournalRecord[][] {
  let state: VisitState | null = null;
  return appends.map(([{ derivesVisit: _derived, ...hit }], i) => {
    const records: JournalRecord[] = [hit];
    if (state) records.push({ table: 'visits', team: TEAM, row: { site_id: SITE.id, session_id: state.visitId, sign: -1, version: i, start: state.start, $reference: 1 } });
    state = withPageview(state, { events: 0, engagementMs: 0 }, { ts: String(hit.row.ts), columns: hit.row as Record<string, string | number> });
    records.push({ table: 'visits', team: TEAM, row: visitRow(state, 1, i + 1) });
    return records;
  });
}

describe('an ingest journal written before row layouts', () => {
  it('replays into the store with the records appended after the upgrade: every hit once, and each visit of all its pageviews', async () => {
    const root = await mkdtemp(join(tmpdir(), 'plumb-journal-upgrade-'));
    roots.push(root);
    const dir = join(root, 'journal');
    const [first, second, third] = asJournaledBefore(await pageviews(['/a', '/b', '/c']));
    // After the upgrade the node starts with no visits in memory: the next hits are a new visit.
    const after = (await pageviews(['/d', '/e'], '193.0.6.140')).flat();

    // The old version's journal: each record is the JSON of the record itself.
    const old = await openJournal<JournalRecord>({ dir, log: silentLog, fsync: false });
    for (const records of [first, second, third]) await old.append(records);
    await old.close();
    const onDisk = await openJournal<EncodedRecord>({ dir, log: silentLog, fsync: false, codec: ENCODED_RECORD_CODEC });
    const replayed = await onDisk.next(100);
    expect(replayed!.records.map((record) => record.layout)).toEqual([...first, ...second, ...third].map(() => undefined));
    await onDisk.close();

    // This version reopens it and appends its own.
    const journal = await openJournal<EncodedRecord>({ dir, log: silentLog, fsync: false, codec: ENCODED_RECORD_CODEC });
    await journal.append(after.map(encodeRecord));
    const analytics = await openAnalyticsStore({ dataDir: root, log: silentLog });
    try {
      // Batches of two records: cancellations by reference land in a batch after their state's.
      const writer = createIngestWriter({ journal, analytics: () => analytics, log: silentLog, batchSize: 2, flushMs: 5 });
      writer.start();
      await writer.stop(30_000);
      expect(journal.pendingRecords()).toBe(0);
      const db = analytics.tenantDatabase(TEAM);
      expect(await analytics.query('SELECT path, screen_width, country, referrer_source FROM {db:Identifier}.hits ORDER BY ts, path', { db })).toEqual(
        ['/a', '/b', '/c', '/d', '/e'].map((path) => ({ path, screen_width: 390, country: 'NL', referrer_source: 'Google' })),
      );
      expect(
        await analytics.query('SELECT sum(sign) AS visits, sum(sign * visit_pageviews) AS pageviews, groupUniqArrayArray(pages) AS pages FROM {db:Identifier}.visits', { db }),
      ).toEqual([{ visits: '2', pageviews: '5', pages: expect.arrayContaining(['/a', '/b', '/c', '/d', '/e']) }]);
      const last = await analytics.query('SELECT version, visit_pageviews, entry_page, exit_page, referrer_source FROM {db:Identifier}.visits FINAL ORDER BY entry_page', { db });
      expect(last).toEqual([
        { version: 3, visit_pageviews: 3, entry_page: '/a', exit_page: '/c', referrer_source: 'Google' },
        { version: 1, visit_pageviews: 2, entry_page: '/d', exit_page: '/e', referrer_source: 'Google' },
      ]);
    } finally {
      await journal.close();
      await analytics.close();
    }
  }, 60_000);
});
