// The lines of the ingest records waiting for the writer, kept as bytes in a ring on a single
// node: through a real journal, writer and analytics store, with a ring small enough to wrap many
// times and to be full while the writer is behind, every event is stored once, exactly as accepted.
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJournal } from '../../lib/ingest/journal.ts';
import { LineRing } from '../../lib/ingest/line-ring.ts';
import { currentLayout } from '../../lib/ingest/row-layouts.ts';
import { type EncodedRecord, encodedRecordCodec, encodeRecord, releaseStoredLines } from '../../lib/ingest/sink.ts';
import { createIngestWriter } from '../../lib/ingest/writer.ts';
import { silentLog } from '../../lib/log.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';

const TEAM = '5c8d2e3f-4051-4b62-8c73-8d94ea5fb607';
const SITE = '0f9e8d7c-6b5a-4493-8281-7069f5e4d3c2';
const HIT_COLUMNS = currentLayout('hits')!.columns;

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

const pathOf = (n: number) => `/page/${n}/${'ü€😀'.repeat(n % 7)}`;
const hit = (n: number) =>
  encodeRecord({
    table: 'hits',
    team: TEAM,
    row: Object.fromEntries(HIT_COLUMNS.map((column) => [column, { site_id: SITE, session_id: String(n), ts: '2026-11-20 10:00:00.000', path: pathOf(n) }[column] ?? null])),
  });

describe('ingest records whose lines wait in a line ring', () => {
  it('are all stored once, as accepted, while the ring wraps and, when full, records keep their text', async () => {
    const root = await mkdtemp(join(tmpdir(), 'plumb-line-ring-'));
    roots.push(root);
    const analytics = await openAnalyticsStore({ dataDir: root, log: silentLog });
    const ring = new LineRing(8 * 1024);
    const journal = await openJournal<EncodedRecord>({ dir: join(root, 'journal'), log: silentLog, fsync: false, codec: encodedRecordCodec(ring) });
    const writer = createIngestWriter({ journal, analytics: () => analytics, log: silentLog, batchSize: 25, flushMs: 10, onAcknowledged: releaseStoredLines });
    const caughtUp = async () => {
      const deadline = Date.now() + 20_000;
      while (journal.pendingRecords() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    try {
      writer.start();
      const inRing: boolean[] = [];
      for (let n = 0; n < 600; n += 3) {
        const records = [n, n + 1, n + 2].map(hit);
        await journal.append(records);
        for (const record of records) inRing.push(typeof record.encodedLine !== 'string');
        // 90 records fill the ring (they wait as text past that); then the writer catches up, stores
        // them and releases the ring, and the next ones wrap round it.
        if (n % 90 === 87) await caughtUp();
      }
      await caughtUp();
      const stored = await analytics.query<{ path: string; n: string }>('SELECT path, count() AS n FROM {db:Identifier}.hits GROUP BY path', { db: await analytics.ensureTenant(TEAM) });
      expect(stored.map((row) => row.path).sort()).toEqual(Array.from({ length: 600 }, (_, n) => pathOf(n)).sort());
      expect(stored.every((row) => row.n === '1')).toBe(true);
      // Both ways of waiting were taken, and the ring was written round several times.
      expect(inRing.filter(Boolean).length).toBeGreaterThan(50);
      expect(inRing.filter((kept) => !kept).length).toBeGreaterThan(0);
      expect(ring.added).toBeGreaterThan(ring.capacity * 4);
    } finally {
      await writer.stop(5000);
      await journal.close();
      await analytics.close();
    }
  }, 60_000);
});
