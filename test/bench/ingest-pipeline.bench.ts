// The ingest pipeline in one process, without HTTP or a disk: CPU per tracker pageview from the
// request's fields to the journal's framed bytes (site lookup, bot filter, enrichment, visitor
// hash, visit, the hit's row, its encoding and framing). The HTTP benchmark's req/s
// moves by ±10% with this machine's drift; this figure is far steadier, so a change to the
// pipeline can be judged by it. Then the other half of a pageview's cost: the writer storing the
// journaled records in chDB, deriving the visits' states from them (whole process: the engine
// parses inserts on threads of its own).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Journal } from '../../lib/ingest/journal.ts';
import { encodeFrames } from '../../lib/ingest/journal/frame.ts';
import { type IngestDeps, type RequestInfo, trackerPageview } from '../../lib/ingest/pipeline.ts';
import { openGeoDatabase } from '../../lib/ingest/enrich/geo.ts';
import { createVisitTracker } from '../../lib/ingest/visit-tracker.ts';
import { ENCODED_RECORD_CODEC, type EncodedRecord, encodeRecord } from '../../lib/ingest/sink.ts';
import { createIngestWriter, type WritableRecord } from '../../lib/ingest/writer.ts';
import { silentLog } from '../../lib/log.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import type { Site } from '../../lib/sites/sites.ts';
import { seededRandom } from '../support/seeded-random.ts';
import type { BenchSuite } from './run.ts';
import { VISITOR_REFERRERS, VISITOR_USER_AGENTS } from './traffic.ts';

const SITE: Site = { id: 'bde49a38-3920-4f2f-877e-d5f635bc4290', team_id: '3fa1648f-7a2b-4e60-be35-e2f197d1934f', domain: 'bench.example', timezone: 'UTC', tenant: 'tenant_3fa1648f7a2b4e60be35e2f197d1934f' };
const WARMUP = 20_000;
const PAGEVIEWS = 200_000;

interface Pageview {
  body: { url: string; referrer?: string; width: number };
  request: RequestInfo;
}

/** One visitor, one page, as the HTTP benchmark sends. */
function sameVisitor(): Pageview[] {
  const body = { url: 'https://bench.example/pricing?utm_source=newsletter', referrer: 'https://www.google.com/', width: 1440 };
  const request = { ip: '127.0.0.1', userAgent: VISITOR_USER_AGENTS[0], origin: 'https://bench.example', headers: {} };
  return [{ body, request }];
}

/** 20,000 visitors (public IPv4 addresses, six browsers) over 200 pages, six referrers and three widths. */
function manyVisitors(count: number): Pageview[] {
  // A fixed sequence, so every run measures the same pageviews.
  const next = seededRandom(42);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  const visitors = Array.from({ length: 20_000 }, () => ({
    ip: `${1 + Math.floor(next() * 222)}.${Math.floor(next() * 256)}.${Math.floor(next() * 256)}.${1 + Math.floor(next() * 254)}`,
    userAgent: pick(VISITOR_USER_AGENTS),
  }));
  return Array.from({ length: count }, () => {
    const visitor = pick(visitors);
    const body = { url: `https://bench.example/docs/page-${Math.floor(next() * 200)}?utm_source=${pick(['', 'newsletter', 'ads'])}`, referrer: pick(VISITOR_REFERRERS), width: pick([390, 1024, 1440]) };
    return { body, request: { ...visitor, origin: 'https://bench.example', headers: {} } };
  });
}

async function measure(pageviews: readonly Pageview[], kept?: EncodedRecord[]): Promise<{ cpuUs: number; rows: number; bytes: number }> {
  const salt = new Uint8Array(32).fill(7);
  const totals = { rows: 0, bytes: 0 };
  let keptPageviews = 0;
  const deps: IngestDeps = {
    geo: await openGeoDatabase(),
    salts: { forTime: async () => salt, prune: async () => 0 },
    visits: createVisitTracker({ timeoutMs: 30 * 60_000 }),
    sites: { byHostname: async () => SITE, byId: async () => SITE, invalidate() {} },
    rejections: { count() {}, flush: async () => {} },
    // What the single-node sink and the journal do to an append before the disk write.
    journal: {
      async append(records) {
        totals.rows += records.length;
        const encoded = records.map(encodeRecord);
        totals.bytes += encodeFrames(encoded, ENCODED_RECORD_CODEC).data.length;
        if (kept && keptPageviews < STORED_PAGEVIEWS) {
          kept.push(...encoded);
          keptPageviews += encoded.filter((record) => record.table === 'hits').length;
        }
      },
    },
    appended() {},
  };
  const run = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const { body, request } = pageviews[i % pageviews.length];
      await trackerPageview(deps, body, request);
    }
  };
  await run(WARMUP);
  totals.rows = 0;
  totals.bytes = 0;
  const started = process.cpuUsage();
  await run(PAGEVIEWS);
  const used = process.cpuUsage(started);
  deps.geo.close();
  return { cpuUs: (used.user + used.system) / PAGEVIEWS, rows: totals.rows / PAGEVIEWS, bytes: totals.bytes / PAGEVIEWS };
}

/** Pageviews whose records the writer stores, in batches of the default size. */
const STORED_PAGEVIEWS = 60_000;
const STORED_BATCH = 10_000;

/**
 * CPU per pageview while the writer stores `records` (in journal order) in a fresh chDB: of the
 * whole process, and of the main thread alone, which is the part that competes with the requests.
 */
async function measureStoring(records: EncodedRecord[], pageviews: number): Promise<{ processUs: number; mainThreadUs: number }> {
  const root = mkdtempSync(join(tmpdir(), 'plumb-bench-ingest-store-'));
  const analytics = await openAnalyticsStore({ dataDir: root, log: silentLog });
  try {
    await analytics.ensureTenant(SITE.team_id);
    let pending = records;
    let batches = 0;
    const journal = {
      async next(max: number) {
        if (pending.length === 0) return null;
        const taken = pending.slice(0, max);
        const ack = async () => {
          pending = pending.slice(taken.length);
        };
        return { records: taken, token: `bench-${++batches}`, ack };
      },
      pendingRecords: () => pending.length,
    } as unknown as Journal<WritableRecord>;
    const started = process.cpuUsage();
    const mainStarted = process.threadCpuUsage();
    const writer = createIngestWriter({ journal, analytics: () => analytics, log: silentLog, batchSize: STORED_BATCH, flushMs: 1 });
    writer.start();
    await writer.stop(600_000);
    const used = process.cpuUsage(started);
    const mainUsed = process.threadCpuUsage(mainStarted);
    if (pending.length > 0) throw new Error(`the writer left ${pending.length} records unstored`);
    return { processUs: (used.user + used.system) / pageviews, mainThreadUs: (mainUsed.user + mainUsed.system) / pageviews };
  } finally {
    await analytics.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const suite: BenchSuite = {
  name: 'ingest-pipeline',
  description: `tracker pageviews through the ingest pipeline in-process (no HTTP, no disk), ${PAGEVIEWS.toLocaleString('en')} per workload`,
  async run() {
    const one = await measure(sameVisitor());
    const kept: EncodedRecord[] = [];
    const many = await measure(manyVisitors(PAGEVIEWS), kept);
    const storedPageviews = kept.filter((record) => record.table === 'hits').length;
    const storing = await measureStoring(kept, storedPageviews);
    return {
      'CPU µs per pageview, one visitor (as the HTTP bench)': one.cpuUs.toFixed(1),
      'journal rows / bytes per pageview, one visitor': `${one.rows.toFixed(2)} / ${Math.round(one.bytes)}`,
      'CPU µs per pageview, 20,000 visitors': many.cpuUs.toFixed(1),
      'journal rows / bytes per pageview, 20,000 visitors': `${many.rows.toFixed(2)} / ${Math.round(many.bytes)}`,
      [`writer storing them in chDB, CPU µs per pageview (whole process; ${storedPageviews.toLocaleString('en')} pageviews, batches of ${STORED_BATCH.toLocaleString('en')} records)`]: storing.processUs.toFixed(1),
      'of which on the main thread': storing.mainThreadUs.toFixed(1),
    };
  },
};

export default suite;
