// The leader's drain of the JetStream ingest stream, against the real NATS and PostgreSQL: a batch
// a leader took but did not finish comes back to the next leader exactly (same records, same
// dedup token), the deposed leader can no longer move the cursor, and acked messages are purged.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'nats';
import pg from 'pg';
import { createLeaderFence, FencedError } from '../../cluster/fencing.ts';
import { createForwarder } from '../../cluster/forwarding.ts';
import type { LeaderElector } from '../../cluster/election/elector.ts';
import { type IngestStream, openIngestStream } from '../../cluster/ingest-stream.ts';
import { createStreamJournal } from '../../cluster/stream-journal.ts';
import { JournalFullError } from '../../lib/ingest/journal.ts';
import type { JournalRecord } from '../../lib/ingest/pipeline.ts';
import { PlumbError } from '../../lib/errors.ts';
import type { ServiceBroker } from 'moleculer';
import { silentLog } from '../../lib/log.ts';
import { type MetadataStore, openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { NATS_URL, POSTGRES_URL } from '../support/cluster.ts';

const id = randomBytes(4).toString('hex');
const database = `plumb_cluster_${id}`;
const namespace = `plumbsj${id}`;
const smallNamespace = `plumbsjsmall${id}`;
let admin: pg.Client;
let store: MetadataStore;
let stream: IngestStream;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  store = await openMetadataStore({ dataDir: '/nonexistent', databaseUrl: Object.assign(new URL(POSTGRES_URL), { pathname: `/${database}` }).toString(), log: silentLog });
  stream = await openIngestStream({ url: NATS_URL, namespace, maxBytes: 1024 * 1024, log: silentLog });
});

afterAll(async () => {
  await stream?.close();
  const nc = await connect({ servers: NATS_URL });
  const jsm = await nc.jetstreamManager();
  for (const name of [namespace, smallNamespace]) await jsm.streams.delete(`${name}_ingest`).catch(() => undefined);
  await nc.close();
  await store?.close();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

const record = (n: number): JournalRecord => ({ table: 'hits', team: 'team-1', row: { path: `/${n}` } });
const paths = (records: JournalRecord[]) => records.map((r) => r.row.path);

describe('the stream journal', () => {
  it('hands an unfinished batch to the next leader unchanged, fences the old one out, and purges what is stored', async () => {
    const fence = createLeaderFence(() => store, 'node', true);
    await stream.publish([record(1), record(2)], 'batch-a');
    await stream.publish([record(1), record(2)], 'batch-a'); // a retried forward: deduplicated
    await stream.publish([record(3)]);
    await stream.publish([record(4), record(5)]);

    const first = createStreamJournal({ stream, metadata: () => store, fence, epoch: 1, log: silentLog, refreshMs: 50 });
    const taken = (await first.next(3))!;
    expect(paths(taken.records)).toEqual(['/1', '/2', '/3']);

    // Leader 1 is deposed before it acknowledges; leader 2 gets exactly that batch again.
    const second = createStreamJournal({ stream, metadata: () => store, fence, epoch: 2, log: silentLog, refreshMs: 50 });
    const replayed = (await second.next(1000))!;
    expect(paths(replayed.records)).toEqual(['/1', '/2', '/3']);
    expect(replayed.token).toBe(taken.token);
    await expect(taken.ack()).rejects.toBeInstanceOf(FencedError);

    await replayed.ack();
    expect((await stream.depth()).messages).toBe(1);
    const rest = (await second.next(1000))!;
    expect(paths(rest.records)).toEqual(['/4', '/5']);
    expect(rest.token).not.toBe(taken.token);
    await rest.ack();
    expect(await second.next(1000)).toBeNull();
    expect((await stream.depth()).messages).toBe(0);
    await Promise.all([first.close(), second.close()]);
  });

  it('is bounded: past its capacity an append is refused (503 for a forwarded batch), never an older message dropped', async () => {
    const small = await openIngestStream({ url: NATS_URL, namespace: smallNamespace, maxBytes: 16 * 1024, log: silentLog });
    try {
      const big = (n: number): JournalRecord => ({ table: 'events', team: 'team-1', row: { path: `/${n}`, filler: 'x'.repeat(1000) } });
      let appended = 0;
      let refusal: unknown;
      for (let n = 0; n < 40 && refusal === undefined; n++) {
        await small.publish([big(n)]).then(
          () => appended++,
          (err: unknown) => (refusal = err),
        );
      }
      expect(refusal).toBeInstanceOf(JournalFullError);
      expect(appended).toBeGreaterThan(5);
      expect((await small.depth()).messages).toBe(appended);

      // The leader's side of a forward answers the follower with a 503 it can pass on.
      const elector = { state: () => ({ leaderNodeId: 'me' }) } as unknown as LeaderElector;
      const forwarder = createForwarder({ broker: {} as ServiceBroker, elector, stream: small, nodeId: 'me', timeoutMs: 1000, log: silentLog });
      const received = forwarder.receive({ batchId: 'full-batch', records: [big(99)] });
      await expect(received).rejects.toBeInstanceOf(PlumbError);
      await expect(received).rejects.toMatchObject({ code: 503 });
    } finally {
      await small.close();
    }
  });
});
