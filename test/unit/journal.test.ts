// The ingest journal's contract: order, batches, replay after reopen, damage on disk, segment
// rolling and deletion, group commit, back-pressure when full, and a clean close.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { constants as fsConstants } from 'node:fs';
import { appendFile, mkdtemp, open, readdir, readFile, readlink, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { type Journal, JournalFullError, type JournalOptions, openJournal } from '../../lib/ingest/journal.ts';
import type { Log } from '../../lib/log.ts';
import { fullGarbageCollection } from '../support/garbage.ts';

type Rec = { n: number };
// Every record below is {"n":<digit>}: 7 bytes of JSON + 8 bytes of frame header = 15 bytes.
const recs = (...ns: number[]): Rec[] => ns.map((n) => ({ n }));

const dirs: string[] = [];
const journals: Journal<Rec>[] = [];
afterEach(async () => {
  jest.restoreAllMocks();
  await Promise.all(journals.splice(0).map((j) => j.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

function recordingLog() {
  const lines: { level: string; obj: unknown; msg?: string }[] = [];
  const at = (level: string) => (obj: object | string, msg?: string) => void lines.push({ level, obj, msg });
  const log: Log = { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { lines, log };
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-journal-'));
  dirs.push(dir);
  return join(dir, 'journal');
}

async function openAt(dir: string, options: Partial<JournalOptions<Rec>> = {}): Promise<Journal<Rec>> {
  const journal = await openJournal<Rec>({ dir, log: recordingLog().log, fsync: false, ...options });
  journals.push(journal);
  return journal;
}

/** Takes and acknowledges everything pending, as the writer would. */
async function drain(journal: Journal<Rec>): Promise<number[]> {
  const seen: number[] = [];
  for (let batch = await journal.next(1000); batch; batch = await journal.next(1000)) {
    seen.push(...batch.records.map((r) => r.n));
    await batch.ack();
  }
  return seen;
}

const seg = (dir: string, n: number) => join(dir, `${String(n).padStart(10, '0')}.seg`);

/** Whether this process holds `file` open with O_DSYNC, read from Linux's /proc/self/fdinfo. */
async function openedWithDsync(file: string): Promise<boolean> {
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target !== file) continue;
    const flags = Number.parseInt(/^flags:\s*([0-7]+)$/m.exec(await readFile(`/proc/self/fdinfo/${fd}`, 'utf8'))![1], 8);
    return (flags & fsConstants.O_DSYNC) === fsConstants.O_DSYNC;
  }
  throw new Error(`${file} is not open in this process`);
}
const segments = async (dir: string) => (await readdir(dir)).filter((f) => f.endsWith('.seg')).sort();

describe('append / next / ack', () => {
  it('hands records back in append order, then nothing once acknowledged', async () => {
    const journal = await openAt(await tempDir());
    expect(await journal.next(10)).toBeNull();
    await journal.append(recs(1, 2));
    await journal.append(recs(3));
    expect(journal.pendingRecords()).toBe(3);
    expect(journal.pendingBytes()).toBe(45);
    const batch = await journal.next(10);
    expect(batch?.records).toEqual(recs(1, 2, 3));
    await batch?.ack();
    expect(journal.pendingRecords()).toBe(0);
    expect(journal.pendingBytes()).toBe(0);
    expect(await journal.next(10)).toBeNull();
    expect(journal.stats()).toEqual({ appends: 2, fsyncs: 0, segments: 1 });
  });

  it('respects maxRecords and maxBytes, but always returns at least one record', async () => {
    const journal = await openAt(await tempDir());
    await journal.append(recs(1, 2, 3, 4, 5));
    const first = await journal.next(2);
    expect(first?.records).toEqual(recs(1, 2));
    await first?.ack();
    const second = await journal.next(10, 30);
    expect(second?.records).toEqual(recs(3, 4));
    await second?.ack();
    const third = await journal.next(10, 1);
    expect(third?.records).toEqual(recs(5));
    await third?.ack();
    expect(await journal.next(10)).toBeNull();
  });

  it('refuses a second next() while a batch is outstanding', async () => {
    const journal = await openAt(await tempDir());
    await journal.append(recs(1, 2));
    const batch = await journal.next(1);
    await expect(journal.next(1)).rejects.toThrow('a batch is outstanding; ack() it before calling next() again');
    await batch?.ack();
    expect((await journal.next(1))?.records).toEqual(recs(2));
  });

  it('resolves append([]) at once and writes nothing', async () => {
    const journal = await openAt(await tempDir());
    await journal.append([]);
    expect(journal.stats()).toEqual({ appends: 0, fsyncs: 0, segments: 1 });
    expect(await journal.next(10)).toBeNull();
  });

  it('writes the records to disk as they were at the call and leaves them untouched', async () => {
    const dir = await tempDir();
    const journal = await openAt(dir);
    const record = Object.freeze({ n: 1 });
    const mutable = { n: 2 };
    const appended = journal.append([record, mutable]);
    mutable.n = 9;
    await appended;
    expect(record).toEqual({ n: 1 });
    await journal.close();
    expect((await (await openAt(dir)).next(10))?.records).toEqual(recs(1, 2));
  });

  it('hands out records still in memory as the appended objects, without reading them back', async () => {
    const journal = await openAt(await tempDir());
    const appended = recs(1, 2, 3);
    await journal.append(appended);
    const batch = await journal.next(2);
    expect(batch?.records[0]).toBe(appended[0]);
    expect(batch?.records[1]).toBe(appended[1]);
    await batch?.ack();
    expect((await journal.next(10))?.records[0]).toBe(appended[2]);
  });

  it('reads records back from disk once they are past the memory budget, in order and with the same tokens', async () => {
    const dir = await tempDir();
    // 30 bytes: the last two records of any append stay in memory, the rest only on disk.
    const journal = await openAt(dir, { memoryBytes: 30 });
    const appended = recs(1, 2, 3, 4, 5);
    await journal.append(appended);
    const first = await journal.next(2);
    expect(first?.records).toEqual(recs(1, 2));
    expect(first?.records[0]).not.toBe(appended[0]);
    await first?.ack();
    const second = await journal.next(2);
    expect(second?.records).toEqual(recs(3, 4));
    await second?.ack();
    const third = await journal.next(2);
    expect(third?.records[0]).toBe(appended[4]);
    // A batch from memory carries the token a read from disk would have: replayed after a stop, it is the same batch.
    const token = third?.token;
    await journal.close();
    const reopened = await openAt(dir);
    const replayed = await reopened.next(10);
    expect(replayed?.records).toEqual(recs(5));
    expect(replayed?.token).toBe(token);
  });

  it('frames records with the codec it is given, on disk and back', async () => {
    const dir = await tempDir();
    // Given in parts, as a codec wrapping text it already has does: the frame holds them joined.
    const codec = { encode: (r: Rec) => ['[', `${r.n}`, ']'], decode: (payload: string) => ({ n: JSON.parse(payload)[0] as number }) };
    const journal = await openAt(dir, { codec, memoryBytes: 0 });
    await journal.append(recs(1, 2));
    expect((await journal.next(10))?.records).toEqual(recs(1, 2));
    await journal.close();
    expect((await readFile(seg(dir, 1))).toString('latin1')).toContain('[1]');
    expect((await (await openAt(dir, { codec })).next(10))?.records).toEqual(recs(1, 2));
  });
});

describe('reopening', () => {
  it('replays unacknowledged records after a close, and counts them as pending', async () => {
    const dir = await tempDir();
    const journal = await openAt(dir);
    await journal.append(recs(1, 2, 3));
    await (await journal.next(1))?.ack();
    await journal.close();
    const reopened = await openAt(dir);
    expect(reopened.pendingRecords()).toBe(2);
    expect(reopened.pendingBytes()).toBe(30);
    expect(await drain(reopened)).toEqual([2, 3]);
  });

  it('hands out the batch outstanding at the stop again, with the same records and token', async () => {
    const dir = await tempDir();
    const journal = await openAt(dir);
    await journal.append(recs(1, 2, 3, 4));
    const batch = await journal.next(2);
    expect(batch?.token).toMatch(/^[0-9a-f]{16}\/1:0-1:30$/);
    await journal.close();
    const reopened = await openAt(dir);
    const again = await reopened.next(100); // the outstanding batch comes back as it was, whatever the limits
    expect(again?.records).toEqual(recs(1, 2));
    expect(again?.token).toBe(batch?.token);
    await again?.ack();
    const rest = await reopened.next(100);
    expect(rest?.records).toEqual(recs(3, 4));
    expect(rest?.token).toBe(batch?.token.replace('1:0-1:30', '1:30-1:60'));
  });

  it('replays nothing that was acknowledged', async () => {
    const dir = await tempDir();
    const journal = await openAt(dir);
    await journal.append(recs(1, 2));
    await (await journal.next(10))?.ack();
    await journal.close();
    const reopened = await openAt(dir);
    expect(reopened.pendingRecords()).toBe(0);
    expect(await reopened.next(10)).toBeNull();
  });
});

describe('damage on disk', () => {
  async function twoRecordsThen(garbage: Buffer) {
    const dir = await tempDir();
    const journal = await openAt(dir);
    await journal.append(recs(1, 2));
    await journal.close();
    await appendFile(seg(dir, 1), garbage);
    const { lines, log } = recordingLog();
    const reopened = await openAt(dir, { log });
    return { dir, reopened, warnings: lines.filter((l) => l.level === 'warn'), errors: lines.filter((l) => l.level === 'error') };
  }

  it('cuts a torn tail (a partial frame) off the last segment and says how many bytes', async () => {
    // A header announcing 20 bytes of payload, followed by only 2 of them.
    const { dir, reopened, warnings } = await twoRecordsThen(Buffer.from([20, 0, 0, 0, 1, 2, 3, 4, 0x7b, 0x22]));
    expect(warnings).toEqual([expect.objectContaining({ obj: expect.objectContaining({ bytes: 10, offset: 30 }), msg: 'journal: torn tail of 10 bytes truncated' })]);
    expect((await stat(seg(dir, 1))).size).toBe(30);
    await reopened.append(recs(3));
    expect(await drain(reopened)).toEqual([1, 2, 3]);
  });

  it('cuts a complete final frame whose CRC does not match', async () => {
    const payload = Buffer.from('{"n":3}');
    const header = Buffer.alloc(8);
    header.writeUInt32LE(payload.length, 0);
    header.writeUInt32LE((crc32(payload) ^ 1) >>> 0, 4);
    const { reopened, warnings } = await twoRecordsThen(Buffer.concat([header, payload]));
    expect(warnings).toEqual([expect.objectContaining({ obj: expect.objectContaining({ bytes: 15 }) })]);
    expect(await drain(reopened)).toEqual([1, 2]);
  });

  it('cuts a zero-filled tail (what a file system may leave after a crash)', async () => {
    const { reopened, warnings } = await twoRecordsThen(Buffer.alloc(4096));
    expect(warnings).toEqual([expect.objectContaining({ obj: expect.objectContaining({ bytes: 4096 }) })]);
    expect(await drain(reopened)).toEqual([1, 2]);
  });

  async function threeSegmentsOfTwo(): Promise<string> {
    const dir = await tempDir();
    const journal = await openAt(dir, { segmentBytes: 40 });
    for (const n of [1, 2, 3, 4, 5, 6]) await journal.append(recs(n));
    await journal.close();
    return dir;
  }

  it('skips a damaged record in a closed segment and keeps every good record after it, logging an error', async () => {
    const dir = await threeSegmentsOfTwo();
    const file = await open(seg(dir, 1), 'r+');
    await file.write(Buffer.from('7'), 0, 1, 13); // {"n":1} becomes {"n":7}: the CRC no longer matches
    await file.close();
    const { lines, log } = recordingLog();
    const journal = await openAt(dir, { log });
    expect(lines.filter((l) => l.level === 'error')).toEqual([
      expect.objectContaining({ obj: expect.objectContaining({ from: 0, to: 15, bytes: 15 }), msg: 'journal: damaged bytes skipped; any records in them are lost' }),
    ]);
    expect(journal.pendingRecords()).toBe(5);
    expect(await drain(journal)).toEqual([2, 3, 4, 5, 6]);
  });

  it('resynchronises after a damaged length field in the middle of a segment', async () => {
    const dir = await tempDir();
    const journal = await openAt(dir, { segmentBytes: 50 });
    for (const n of [1, 2, 3, 4, 5, 6]) await journal.append(recs(n));
    await journal.close();
    const file = await open(seg(dir, 1), 'r+');
    await file.write(Buffer.from([0xff, 0xff]), 0, 2, 15); // record 2's length now reads 65535
    await file.close();
    const { lines, log } = recordingLog();
    const reopened = await openAt(dir, { log });
    expect(lines.filter((l) => l.level === 'error')).toEqual([expect.objectContaining({ obj: expect.objectContaining({ from: 15, to: 30 }) })]);
    expect(await drain(reopened)).toEqual([1, 3, 4, 5, 6]);
  });

  it('refuses to open when a closed segment is cut short, and opens once the operator accepts the loss', async () => {
    const dir = await threeSegmentsOfTwo();
    await truncate(seg(dir, 1), 22);
    await expect(openAt(dir)).rejects.toThrow(
      `journal ${dir} cannot be opened safely: ${seg(dir, 1)} is damaged from offset 15 to its end (7 bytes); a closed segment is always complete, so acknowledged records may be lost. Truncate the file to 15 bytes to accept the loss, or restore it`,
    );
    await truncate(seg(dir, 1), 15);
    expect(await drain(await openAt(dir))).toEqual([1, 3, 4, 5, 6]);
  });

  it('refuses to open when a segment in the middle is missing', async () => {
    const dir = await threeSegmentsOfTwo();
    await rm(seg(dir, 2));
    await expect(openAt(dir)).rejects.toThrow('segment 2 is missing (found 3)');
  });
});

describe('segments', () => {
  it('rolls past segmentBytes and deletes segments once every record in them is acknowledged', async () => {
    const dir = await tempDir();
    const journal = await openAt(dir, { segmentBytes: 40 });
    for (const n of [1, 2, 3, 4, 5, 6]) await journal.append(recs(n));
    expect(await segments(dir)).toEqual(['0000000001.seg', '0000000002.seg', '0000000003.seg']);
    expect(journal.stats().segments).toBe(3);
    const first = await journal.next(3);
    expect(first?.records).toEqual(recs(1, 2, 3));
    expect(first?.token).toMatch(/\/1:0-2:15$/);
    await first?.ack();
    expect(await segments(dir)).toEqual(['0000000002.seg', '0000000003.seg']);
    const second = await journal.next(10);
    expect(second?.records).toEqual(recs(4, 5, 6));
    await second?.ack();
    expect(await segments(dir)).toEqual(['0000000003.seg']);
    expect(journal.stats().segments).toBe(1);
    await journal.close();
    expect(await (await openAt(dir, { segmentBytes: 40 })).next(10)).toBeNull();
    expect(JSON.parse(await readFile(join(dir, 'checkpoint.json'), 'utf8'))).toEqual({ journal: expect.stringMatching(/^[0-9a-f]{16}$/), segment: 3, offset: 30 });
  });
});

describe('group commit', () => {
  it('writes 500 appends from 50 concurrent callers in far fewer rounds, each resolving after a synced write that began after it', async () => {
    const journal = await openAt(await tempDir(), { fsync: true });
    // A segment opened with O_DSYNC (below) is on disk when a write returns: count the writes on
    // file handles as they start and finish, and any separate fsync beside them.
    const probe = await open(join(dirs[0], 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe);
    await probe.close();
    const writes = { started: 0, finished: 0 };
    const originalWrite = proto.write;
    jest.spyOn(proto, 'write').mockImplementation(async function (this: unknown, ...args: unknown[]) {
      writes.started++;
      const result = await originalWrite.apply(this, args);
      writes.finished++;
      return result;
    });
    const separateSyncs = [jest.spyOn(proto, 'sync'), jest.spyOn(proto, 'datasync')];
    const early: number[] = [];
    let n = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        for (let i = 0; i < 10; i++) {
          const mine = n++;
          const startedBefore = writes.started;
          await journal.append(recs(mine));
          // Rounds run one at a time, so write number `startedBefore` began after this call: it must be done.
          if (writes.finished <= startedBefore) early.push(mine);
        }
      }),
    );
    expect(early).toEqual([]);
    expect(journal.stats().appends).toBe(500);
    expect(journal.stats().fsyncs).toBeLessThanOrEqual(50);
    expect(journal.stats().fsyncs).toBeGreaterThanOrEqual(10); // each caller's 10 appends need 10 rounds
    // One job a round: its write, counted as the round's sync, and no fsync after it.
    expect(writes.finished).toBe(journal.stats().fsyncs);
    for (const spy of separateSyncs) expect(spy).not.toHaveBeenCalled();
    expect(journal.pendingRecords()).toBe(500);
  });

  it('opens its segments with O_DSYNC when every round must be on disk, rolled ones too, and not when it fsyncs on an interval or not at all', async () => {
    const synced = await tempDir();
    const journal = await openAt(synced, { fsync: true, segmentBytes: 40 });
    await journal.append(recs(1));
    expect(await openedWithDsync(seg(synced, 1))).toBe(true);
    await journal.append(recs(2, 3, 4));
    expect(await segments(synced)).toContain('0000000002.seg');
    expect(await openedWithDsync(seg(synced, 2))).toBe(true);

    const onInterval = await tempDir();
    await (await openAt(onInterval, { fsync: true, syncEveryMs: 60_000 })).append(recs(1));
    expect(await openedWithDsync(seg(onInterval, 1))).toBe(false);
    const unsynced = await tempDir();
    await (await openAt(unsynced, { fsync: false })).append(recs(1));
    expect(await openedWithDsync(seg(unsynced, 1))).toBe(false);
  });

  it('reports every fsync of a round with its duration, before the appends it made durable resolve', async () => {
    const durations: number[] = [];
    const journal = await openAt(await tempDir(), { fsync: true, onSynced: (seconds) => durations.push(seconds) });
    await journal.append(recs(1));
    expect(durations).toHaveLength(1);
    await Promise.all([journal.append(recs(2)), journal.append(recs(3))]);
    expect(durations).toHaveLength(journal.stats().fsyncs);
    expect(durations.every((seconds) => seconds >= 0 && seconds < 60)).toBe(true);
  });

  it('keeps accepting appends when the fsync report throws, and logs it', async () => {
    const { lines, log } = recordingLog();
    const journal = await openJournal<Rec>({
      dir: await tempDir(),
      log,
      fsync: true,
      onSynced: () => {
        throw new Error('report broken');
      },
    });
    journals.push(journal);
    await journal.append(recs(1));
    await journal.append(recs(2));
    expect(await drain(journal)).toEqual([1, 2]);
    expect(lines.filter((line) => line.level === 'warn' && line.msg === 'journal: reporting an fsync failed')).toHaveLength(2);
    expect(lines.some((line) => line.level === 'error')).toBe(false);
  });
});

describe('acknowledging on write (syncEveryMs)', () => {
  it('resolves appends without an fsync, then fsyncs what was written once per interval, and nothing when idle', async () => {
    const journal = await openAt(await tempDir(), { fsync: true, syncEveryMs: 100 });
    const fsyncsAtOpen = journal.stats().fsyncs;
    await Promise.all(Array.from({ length: 20 }, (_, i) => journal.append(recs(i % 10))));
    expect(journal.stats().fsyncs).toBe(fsyncsAtOpen);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const afterInterval = journal.stats().fsyncs;
    expect(afterInterval).toBe(fsyncsAtOpen + 1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(journal.stats().fsyncs).toBe(afterInterval);
    expect(await drain(journal)).toHaveLength(20);
  });

  it("reports the interval's fsync with its duration, and none for appends acknowledged on write", async () => {
    const durations: number[] = [];
    const journal = await openAt(await tempDir(), { fsync: true, syncEveryMs: 100, onSynced: (seconds) => durations.push(seconds) });
    await journal.append(recs(1, 2));
    expect(durations).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(durations).toHaveLength(1);
    expect(durations[0]).toBeGreaterThanOrEqual(0);
  });

  it('fsyncs what is still unsynced when it closes, and gives every record back after reopening', async () => {
    const dir = await tempDir();
    const journal = await openJournal<Rec>({ dir, log: recordingLog().log, fsync: true, syncEveryMs: 60_000 });
    await journal.append(recs(1, 2, 3));
    const before = journal.stats().fsyncs;
    await journal.close();
    expect(journal.stats().fsyncs).toBe(before + 1);
    expect(await drain(await openAt(dir))).toEqual([1, 2, 3]);
  });

  it('fsyncs a segment before rolling past it, so only the newest segment can end torn', async () => {
    const journal = await openAt(await tempDir(), { fsync: true, syncEveryMs: 60_000, segmentBytes: 30 });
    await journal.append(recs(1, 2));
    const before = journal.stats().fsyncs;
    await journal.append(recs(3));
    expect(journal.stats().segments).toBe(2);
    expect(journal.stats().fsyncs).toBe(before + 1);
  });
});

describe('capacity', () => {
  it('rejects appends past maxPendingBytes with a retry delay, and accepts them again after an ack', async () => {
    const journal = await openAt(await tempDir(), { maxPendingBytes: 40 });
    await journal.append(recs(1, 2));
    const full = journal.append(recs(3));
    await expect(full).rejects.toBeInstanceOf(JournalFullError);
    await expect(full).rejects.toMatchObject({ retryAfterSeconds: 2, message: 'ingest journal is full (30 of 40 bytes waiting to be written to the analytics store)' });
    expect(journal.pendingBytes()).toBe(30);
    await (await journal.next(10))?.ack();
    await journal.append(recs(3));
    expect(journal.pendingBytes()).toBe(15);
    expect(await drain(journal)).toEqual([3]);
  });
});

describe('memory', () => {
  it('lets go of a batch once it is acknowledged and the next one is taken', async () => {
    // Proves a batch's records become garbage.
    const collectGarbage = fullGarbageCollection();
    const journal = await openAt(await tempDir());
    await journal.append(recs(1, 2, 3));
    const takeFirst = async () => {
      const batch = await journal.next(10);
      await batch!.ack();
      return new WeakRef(batch!.records);
    };
    const taken = await takeFirst();
    for (let n = 0; n < 3; n++) {
      await journal.append(recs(n));
      const batch = await journal.next(10);
      await batch!.ack();
    }
    // A WeakRef keeps its target until the job that created or read it has ended.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(taken.deref()).toBeUndefined();
  });
});

describe('close', () => {
  it('waits for in-flight appends, is idempotent, and refuses appends afterwards', async () => {
    const dir = await tempDir();
    const journal = await openAt(dir, { fsync: true });
    let resolved = 0;
    const appends = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => journal.append(recs(n)).then(() => resolved++));
    await journal.close();
    expect(resolved).toBe(9);
    await Promise.all(appends);
    await journal.close();
    await expect(journal.append(recs(10))).rejects.toThrow('journal is closed');
    expect(await drain(await openAt(dir))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('writes its files only inside its directory', async () => {
    const dir = await tempDir();
    const journal = await openAt(dir);
    await journal.append(recs(1));
    await journal.close();
    expect((await readdir(dir)).sort()).toEqual(['0000000001.seg', 'checkpoint.json']);
    await writeFile(join(dir, 'README'), 'not a segment'); // foreign files are ignored
    expect(await drain(await openAt(dir))).toEqual([1]);
  });
});
