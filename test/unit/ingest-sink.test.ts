// How the single-node sink frames ingest records in the journal: the JSON of the record, with the
// row's encoded line cut back out when a record is read from disk, for records written by this
// codec and by journals from before it alike.
import { describe, expect, it } from '@jest/globals';
import { encodeFrames } from '../../lib/ingest/journal/frame.ts';
import { LineRing } from '../../lib/ingest/line-ring.ts';
import { currentLayout, type ScratchRows } from '../../lib/ingest/row-layouts.ts';
import { ENCODED_RECORD_CODEC, EncodedRecord, encodedRecordCodec, encodeRecord, releaseStoredLines } from '../../lib/ingest/sink.ts';

const TEAM = '22222222-2222-4222-8222-222222222222';
const fields = (record: EncodedRecord) => ({ table: record.table, team: record.team, row: record.row, line: record.line, siteId: record.siteId, visitState: record.visitState });
const HIT_COLUMNS = currentLayout('hits')!.columns;
const VISIT_COLUMNS = currentLayout('visits')!.columns;
/** A row with every column of a layout: null but for `values`. */
const rowIn = (columns: readonly string[], values: Record<string, unknown>) => Object.fromEntries(columns.map((column) => [column, values[column] ?? null]));
const payloadOf = (record: EncodedRecord) => [ENCODED_RECORD_CODEC.encode(record)].flat().join('');

describe('ENCODED_RECORD_CODEC', () => {
  it('writes the JSON of the record around the line it carries', () => {
    const payload = [ENCODED_RECORD_CODEC.encode(new EncodedRecord('hits', TEAM, '{"path":"/a"}', undefined, { siteId: 's', visitState: undefined }))].flat().join('');
    expect(payload).toBe(`{"table":"hits","team":"${TEAM}","row":{"path":"/a"}}`);
    expect(JSON.parse(payload)).toEqual({ table: 'hits', team: TEAM, row: { path: '/a' } });
  });

  it('reads the record back with its line cut out of the payload, not encoded again', () => {
    // Key order and spacing an encoder would not produce: only a cut keeps them.
    const payload = `{"table":"visits","team":"${TEAM}","row":{"sign":-1,"pages":["/a","/b"],"path":"/\\u00e9","session_id":"7","site_id":"s","version":2}}`;
    expect(fields(ENCODED_RECORD_CODEC.decode(payload))).toEqual({
      table: 'visits',
      team: TEAM,
      row: { sign: -1, pages: ['/a', '/b'], path: '/é', session_id: '7', site_id: 's', version: 2 },
      line: '{"sign":-1,"pages":["/a","/b"],"path":"/\\u00e9","session_id":"7","site_id":"s","version":2}',
      siteId: 's',
      visitState: { key: 's|7|2', sign: -1 },
    });
  });

  it('encodes the row when the payload is laid out differently', () => {
    const payload = `{"team":"${TEAM}","table":"events","row":{"name":"signup"}}`;
    expect(fields(ENCODED_RECORD_CODEC.decode(payload))).toEqual({ table: 'events', team: TEAM, row: { name: 'signup' }, line: '{"name":"signup"}', siteId: undefined, visitState: undefined });
  });
});

describe('encodeRecord and ENCODED_RECORD_CODEC with row layouts', () => {
  it("journals a hit as the values of its table's layout, named by the layout's version", () => {
    const row = rowIn(HIT_COLUMNS, { site_id: 's', path: '/a', screen_width: 390 });
    const record = encodeRecord({ table: 'hits', team: TEAM, row });
    expect(record.layout).toBe(currentLayout('hits')!.version);
    expect(JSON.parse(record.line)).toEqual(HIT_COLUMNS.map((column) => row[column]));
    const payload = payloadOf(record);
    expect(JSON.parse(payload)).toEqual({ table: 'hits', team: TEAM, layout: record.layout, values: JSON.parse(record.line) });
    const read = ENCODED_RECORD_CODEC.decode(payload);
    expect(fields(read)).toEqual({ table: 'hits', team: TEAM, row, line: record.line, siteId: 's', visitState: undefined });
    expect(read.layout).toBe(record.layout);
    // A record read back from memory gives the same row from its line.
    expect(record.row).toEqual(row);
  });

  it('journals a visit state in its layout and keeps a cancellation by reference as an object', () => {
    const state = encodeRecord({ table: 'visits', team: TEAM, row: rowIn(VISIT_COLUMNS, { site_id: 's', session_id: '7', sign: 1, version: 2, pages: ['/a'] }) });
    expect(state.line.startsWith('["s","7",1,2,')).toBe(true);
    expect(fields(ENCODED_RECORD_CODEC.decode(payloadOf(state)))).toMatchObject({ visitState: { key: 's|7|2', sign: 1 }, line: state.line });
    const reference = encodeRecord({ table: 'visits', team: TEAM, row: { site_id: 's', session_id: '7', sign: -1, version: 2, start: '2026-11-22 10:00:00.000', $reference: 1 } });
    expect(reference.layout).toBeUndefined();
    const read = ENCODED_RECORD_CODEC.decode(payloadOf(reference));
    expect(read.layout).toBeUndefined();
    expect(read.visitState).toEqual({ key: 's|7|2', sign: -1, reference: true });
  });

  it('journals the mark of a hit whose visit the writer derives, and reads it back with the line cut out', () => {
    const row = rowIn(HIT_COLUMNS, { site_id: 's', session_id: '7', path: '/a', is_entry: 1 });
    const record = encodeRecord({ table: 'hits', team: TEAM, row, derivesVisit: true });
    const payload = payloadOf(record);
    expect(JSON.parse(payload)).toEqual({ table: 'hits', team: TEAM, derivesVisit: true, layout: record.layout, values: JSON.parse(record.line) });
    const read = ENCODED_RECORD_CODEC.decode(payload);
    expect([read.derivesVisit, read.line, read.row]).toEqual([true, record.line, row]);
    expect(ENCODED_RECORD_CODEC.decode(payloadOf(encodeRecord({ table: 'hits', team: TEAM, row }))).derivesVisit).toBeUndefined();
  });

  it('refuses a record in a layout this version does not know, rather than misread its values', () => {
    expect(() => ENCODED_RECORD_CODEC.decode(`{"table":"hits","team":"${TEAM}","layout":99,"values":["x"]}`)).toThrow(/layout 99/);
  });
});

describe('EncodedRecord', () => {
  it('gives its row as parsed from its line, the row as stored', () => {
    const record = new EncodedRecord('hits', TEAM, '{"path":"/a","ts":"2026-11-21 10:00:00.000"}', undefined, { siteId: 's', visitState: undefined });
    expect(record.row).toEqual({ path: '/a', ts: '2026-11-21 10:00:00.000' });
    expect(record.row).toBe(record.row);
  });

  it('parses its row for a single read without keeping it, until something reads `row`', () => {
    const record = new EncodedRecord('hits', TEAM, '{"path":"/a"}', undefined, { siteId: 's', visitState: undefined });
    expect(record.readRow()).toEqual({ path: '/a' });
    expect(record.readRow()).not.toBe(record.readRow());
    const kept = record.row;
    expect(record.readRow()).toBe(kept);
  });

  it('reads a row in a layout into the scratch row for its columns, every column set again', () => {
    const scratch: ScratchRows = new Map();
    const first = encodeRecord({ table: 'hits', team: TEAM, row: rowIn(HIT_COLUMNS, { site_id: 's', path: '/a', referrer: 'https://x.example/' }) });
    const second = encodeRecord({ table: 'hits', team: TEAM, row: rowIn(HIT_COLUMNS, { site_id: 's', path: '/b' }) });
    const read = first.readRow(scratch);
    expect(read).toMatchObject({ path: '/a', referrer: 'https://x.example/' });
    expect(second.readRow(scratch)).toBe(read);
    expect(read).toEqual(rowIn(HIT_COLUMNS, { site_id: 's', path: '/b' }));
    expect(scratch.size).toBe(1);
  });
});

describe('encodedRecordCodec with a line ring', () => {
  /** Frames the records as the journal does: each payload written into one buffer, then handed to `framed`. */
  const frame = (codec: ReturnType<typeof encodedRecordCodec>, records: EncodedRecord[]) => encodeFrames(records, codec);
  const hit = (path: string) => encodeRecord({ table: 'hits', team: TEAM, row: rowIn(HIT_COLUMNS, { site_id: 's', path }) });

  it('moves each framed line into the ring: the same text and row, and its UTF-8 bytes for the insert', () => {
    const ring = new LineRing(4096);
    const record = hit('/ü€😀');
    const text = record.line;
    frame(encodedRecordCodec(ring), [record]);
    expect(record.encodedLine).toBe(record);
    expect(record.line).toBe(text);
    expect(record.row).toEqual(rowIn(HIT_COLUMNS, { site_id: 's', path: '/ü€😀' }));
    expect(record.lineBytes).toBe(Buffer.byteLength(text));
    const target = Buffer.alloc(record.lineBytes);
    expect(record.copyLine(target, 0)).toBe(record.lineBytes);
    expect(target.toString()).toBe(text);
    // The payload on disk is unchanged.
    expect(ENCODED_RECORD_CODEC.decode(payloadOf(record)).line).toBe(text);
  });

  it('keeps the text of a record the full ring has no room for, and a stored record releases every line framed up to it', () => {
    const lineBytes = Buffer.byteLength(hit('/a').line);
    const ring = new LineRing(lineBytes * 2);
    const records = ['/a', '/b', '/c'].map(hit);
    frame(encodedRecordCodec(ring), records);
    expect(records.map((record) => typeof record.encodedLine)).toEqual(['object', 'object', 'string']);
    expect(records[2].lineBytes).toBe(lineBytes);
    // The third, kept as text, marks the ring as it was: once it is stored, both lines before it may go.
    releaseStoredLines(records);
    expect(ring.used).toBe(0);
    const later = hit('/d');
    frame(encodedRecordCodec(ring), [later]);
    expect(later.encodedLine).toBe(later);
    expect(records[2].line).toBe(hit('/c').line);
  });

  it('frames without a ring as text; such a record releases nothing, the last one framed with the ring does', () => {
    const ring = new LineRing(4096);
    const framed = hit('/a');
    frame(encodedRecordCodec(ring), [framed]);
    const plain = hit('/b');
    frame(ENCODED_RECORD_CODEC, [plain]);
    expect(plain.encodedLine).toBe(plain.line);
    expect(plain.releaseLine()).toBe(false);
    releaseStoredLines([framed, plain]);
    expect(ring.used).toBe(0);
  });
});
