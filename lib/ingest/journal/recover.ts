// Opening a journal directory after a clean stop or a crash: find the checkpoint, drop segments it
// has passed, check every segment from it, cut a torn tail, and count what is still pending.
import type { FileHandle } from 'node:fs/promises';
import { open, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Log } from '../../log.ts';
import { type Checkpoint, newJournalId, readCheckpoint, writeCheckpoint } from './checkpoint.ts';
import { type Hole, scanSegment } from './frame.ts';

const SEGMENT_NAME = /^(\d{10})\.seg$/;

export const segmentFile = (dir: string, seq: number) => join(dir, `${String(seq).padStart(10, '0')}.seg`);

export interface Recovered {
  checkpoint: Checkpoint;
  /** Closed segments still holding unacknowledged records: sequence → size (they never change again). */
  closed: Map<number, number>;
  /** The last segment, which appends continue: its sequence and size after any torn tail was cut. */
  active: { seq: number; size: number };
  holes: Map<number, Hole[]>;
  pendingBytes: number;
  pendingRecords: number;
}

function refuse(dir: string, problem: string): Error {
  return new Error(`journal ${dir} cannot be opened safely: ${problem}`);
}

async function listSegments(dir: string): Promise<number[]> {
  const names = await readdir(dir);
  return names.flatMap((name) => {
    const match = SEGMENT_NAME.exec(name);
    return match ? [Number(match[1])] : [];
  }).sort((a, b) => a - b);
}

/** A segment opened for appends that reach the page cache: an fsync, if any, makes them durable. */
export const PAGE_CACHE_APPENDS = 'a';

/**
 * Creates an empty segment and makes its directory entry durable (a later fsync of the file alone
 * would not); the handle is opened for appends with `flags` (see appendFlags in ../journal.ts).
 */
export async function createSegment(dir: string, dirHandle: FileHandle, seq: number, fsync: boolean, flags: string | number = PAGE_CACHE_APPENDS): Promise<FileHandle> {
  const handle = await open(segmentFile(dir, seq), flags, 0o600);
  if (fsync) await dirHandle.sync();
  return handle;
}

/**
 * Damage policy (decided here, tested in test/unit/journal.test.ts):
 * - A torn tail of the LAST segment (damaged bytes with no intact frame after them) is what a crash
 *   during a write leaves; none of it was acknowledged, so it is cut off and logged at warn.
 * - Damaged bytes followed by an intact frame, in any segment, are skipped and logged at error with
 *   their range: frame.ts explains why the next intact frame is a safe resync point, so the good
 *   records after the damage are kept; the records inside the damage are lost, loudly.
 * - Damage that runs to the END of a CLOSED segment refuses the open: a segment is fully fsync'd
 *   before the journal rolls past it, so this is not a crash artifact but a cut or overwritten
 *   file, and nobody can tell how many acknowledged records went with it. So are a missing segment
 *   in the sequence and a checkpoint pointing past its segment's end. The operator decides (the
 *   message says how) rather than the journal silently carrying on.
 */
export async function recoverJournal(dir: string, dirHandle: FileHandle, log: Log, fsync: boolean): Promise<Recovered> {
  let segments = await listSegments(dir);
  let checkpoint = await readCheckpoint(dir);
  if (!checkpoint) {
    if (segments.length > 0) log.warn({ dir, segment: segments[0] }, 'journal: no checkpoint; replaying from the oldest segment');
    checkpoint = { journal: newJournalId(), segment: segments[0] ?? 1, offset: 0 };
    await writeCheckpoint(dir, dirHandle, checkpoint, fsync);
  }
  // Segments behind the checkpoint are acknowledged; their deletion may not have reached the disk.
  for (const seq of segments.filter((s) => s < checkpoint.segment)) await rm(segmentFile(dir, seq), { force: true });
  segments = segments.filter((s) => s >= checkpoint.segment);
  segments.forEach((seq, i) => {
    if (seq !== checkpoint.segment + i) {
      throw refuse(dir, `segment ${checkpoint.segment + i} is missing (found ${seq}); the records in it are lost. Restore it, or move the later segments and checkpoint.json aside to start afresh`);
    }
  });
  if (segments.length === 0) {
    if (checkpoint.offset !== 0) throw refuse(dir, `the checkpoint points into segment ${checkpoint.segment}, which does not exist`);
    await (await createSegment(dir, dirHandle, checkpoint.segment, fsync)).close();
    segments = [checkpoint.segment];
  }

  const recovered: Recovered = { checkpoint, closed: new Map(), active: { seq: 0, size: 0 }, holes: new Map(), pendingBytes: 0, pendingRecords: 0 };
  for (const [i, seq] of segments.entries()) {
    const file = segmentFile(dir, seq);
    const last = i === segments.length - 1;
    const buf = await readFile(file);
    const start = i === 0 ? checkpoint.offset : 0;
    if (start > buf.length) throw refuse(dir, `the checkpoint points to offset ${start} of ${file}, which has only ${buf.length} bytes`);
    const scan = scanSegment(buf, start);
    for (const hole of scan.holes) {
      log.error({ file, from: hole.from, to: hole.to, bytes: hole.to - hole.from }, 'journal: damaged bytes skipped; any records in them are lost');
    }
    if (scan.holes.length > 0) recovered.holes.set(seq, scan.holes);
    let size = buf.length;
    if (scan.tornAt >= 0) {
      if (!last) {
        throw refuse(dir, `${file} is damaged from offset ${scan.tornAt} to its end (${buf.length - scan.tornAt} bytes); a closed segment is always complete, so acknowledged records may be lost. Truncate the file to ${scan.tornAt} bytes to accept the loss, or restore it`);
      }
      const handle = await open(file, 'r+');
      try {
        await handle.truncate(scan.tornAt);
        if (fsync) await handle.sync();
      } finally {
        await handle.close();
      }
      log.warn({ file, bytes: buf.length - scan.tornAt, offset: scan.tornAt }, `journal: torn tail of ${buf.length - scan.tornAt} bytes truncated`);
      size = scan.tornAt;
    }
    recovered.pendingBytes += scan.bytes;
    recovered.pendingRecords += scan.records;
    if (last) recovered.active = { seq, size };
    else recovered.closed.set(seq, size);
  }
  return recovered;
}
