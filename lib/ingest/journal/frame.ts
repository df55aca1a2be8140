// The journal's record framing: [u32 LE payload length][u32 LE crc32 of payload][payload = JSON UTF-8],
// and the scan that tells good frames from a torn tail or damaged bytes when a segment is reopened.
import { crc32 } from 'node:zlib';

export const HEADER_BYTES = 8;

/**
 * Largest payload a frame may carry. Kept below 2^24 on purpose: the length's high byte is then
 * always 0x00, and a JSON UTF-8 payload never contains a 0x00 byte (JSON.stringify escapes U+0000
 * as \u0000 and UTF-8 only produces 0x00 for U+0000). So a frame header can never be mistaken for
 * bytes inside a payload, which is what makes resynchronising after damaged bytes safe.
 */
export const MAX_PAYLOAD_BYTES = 8 * 1024 * 1024;

/**
 * How records become frame payloads and back. The payload must be JSON text: see
 * MAX_PAYLOAD_BYTES. `encode` may give it in parts, written one after the other, so a codec
 * that wraps text it already has needs no copy of it.
 */
export interface RecordCodec<T> {
  encode(record: T): string | readonly string[];
  decode(payload: string): T;
  /**
   * Called with a record's payload bytes once they are in the frame buffer (which the journal
   * does not keep): a codec whose records wait in memory may copy from them what they hold as text.
   */
  framed?(record: T, payload: Buffer): void;
}

export const JSON_CODEC: RecordCodec<unknown> = { encode: (record) => JSON.stringify(record), decode: (payload) => JSON.parse(payload) };

/** Frames every record of one append() into one buffer (one write for the whole call); `sizes` are the frames' lengths. */
export function encodeFrames<T>(records: readonly T[], codec: RecordCodec<T>): { data: Buffer; sizes: number[] } {
  const payloads: (string | readonly string[])[] = [];
  const sizes: number[] = [];
  let total = 0;
  for (const record of records) {
    const json = codec.encode(record);
    let size = 0;
    if (typeof json === 'string') size = Buffer.byteLength(json);
    else if (Array.isArray(json)) for (const part of json) size += Buffer.byteLength(part);
    else throw new TypeError('journal records must be JSON-serialisable values');
    if (size > MAX_PAYLOAD_BYTES) throw new RangeError(`journal record of ${size} bytes exceeds the limit of ${MAX_PAYLOAD_BYTES} bytes`);
    payloads.push(json);
    sizes.push(HEADER_BYTES + size);
    total += HEADER_BYTES + size;
  }
  const data = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < payloads.length; i++) {
    const start = at + HEADER_BYTES;
    const size = sizes[i] - HEADER_BYTES;
    const payload = payloads[i];
    if (typeof payload === 'string') data.write(payload, start, 'utf8');
    else for (let part = 0, to = start; part < payload.length; part++) to += data.write(payload[part], to, 'utf8');
    const bytes = data.subarray(start, start + size);
    data.writeUInt32LE(size, at);
    data.writeUInt32LE(crc32(bytes), at + 4);
    codec.framed?.(records[i], bytes);
    at = start + size;
  }
  return { data, sizes };
}

/**
 * Length of the whole frame starting at `at` if it is intact (sane length, fully inside `end`,
 * CRC matches), else 0. A zero length is never valid: a zero-filled region (what some file
 * systems leave after a crash) would otherwise read as endless empty frames with CRC 0.
 */
export function frameAt(buf: Buffer, at: number, end = buf.length): number {
  if (at + HEADER_BYTES > end) return 0;
  const length = buf.readUInt32LE(at);
  if (length === 0 || length > MAX_PAYLOAD_BYTES || at + HEADER_BYTES + length > end) return 0;
  const payload = buf.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
  return crc32(payload) === buf.readUInt32LE(at + 4) ? HEADER_BYTES + length : 0;
}

export function payloadOf(buf: Buffer, at: number, frameBytes: number): unknown {
  return JSON.parse(payloadText(buf, at, frameBytes));
}

export function payloadText(buf: Buffer, at: number, frameBytes: number): string {
  return buf.toString('utf8', at + HEADER_BYTES, at + frameBytes);
}

/**
 * First offset after damaged bytes where an intact frame starts, or -1. Only offsets whose length
 * high byte is 0x00 can be headers (see MAX_PAYLOAD_BYTES); the CRC and a JSON parse then have to
 * agree as well, so a false resync point would need a 32-bit CRC collision on bytes that also
 * parse as JSON.
 */
export function resyncPoint(buf: Buffer, from: number, end = buf.length): number {
  for (let at = from; at + HEADER_BYTES < end; at++) {
    if (buf[at + 3] !== 0) continue;
    const frame = frameAt(buf, at, end);
    if (frame === 0) continue;
    try {
      payloadOf(buf, at, frame);
      return at;
    } catch {}
  }
  return -1;
}

/** Damaged bytes [from, to) inside a segment that readers must step over. */
export interface Hole {
  from: number;
  to: number;
}

export interface SegmentScan {
  records: number;
  /** Framed bytes of intact records (headers included), what pendingBytes counts. */
  bytes: number;
  holes: Hole[];
  /** Where a torn tail starts (the file should be cut here), or -1 when the segment ends cleanly. */
  tornAt: number;
}

/**
 * Walks the frames of one segment from `start`. Damaged bytes followed by an intact frame become a
 * hole (skipped, reported); damaged bytes that run to the end of the segment are a torn tail.
 * The caller decides what a torn tail means: expected after a crash in the last segment, a sign
 * of lost data in a closed one.
 */
export function scanSegment(buf: Buffer, start: number): SegmentScan {
  const scan: SegmentScan = { records: 0, bytes: 0, holes: [], tornAt: -1 };
  let at = start;
  while (at < buf.length) {
    const frame = frameAt(buf, at);
    if (frame > 0) {
      scan.records++;
      scan.bytes += frame;
      at += frame;
      continue;
    }
    const next = resyncPoint(buf, at + 1);
    if (next < 0) {
      scan.tornAt = at;
      break;
    }
    scan.holes.push({ from: at, to: next });
    at = next;
  }
  return scan;
}
