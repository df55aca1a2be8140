// How the single-node sink frames ingest records in the journal: the JSON of the record, with the
// row's encoded line cut back out when a record is read from disk, for records written by this
// codec and by journals from before it alike.
import { describe, expect, it } from '@jest/globals';
import { ENCODED_RECORD_CODEC, EncodedRecord } from '../../lib/ingest/sink.ts';

const TEAM = '22222222-2222-4222-8222-222222222222';
const fields = (record: EncodedRecord) => ({ table: record.table, team: record.team, row: record.row, line: record.line, siteId: record.siteId, visitState: record.visitState });

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

describe('EncodedRecord', () => {
  it('gives its row as parsed from its line, the row as stored', () => {
    const record = new EncodedRecord('hits', TEAM, '{"path":"/a","ts":"2026-11-21 10:00:00.000"}', undefined, { siteId: 's', visitState: undefined });
    expect(record.row).toEqual({ path: '/a', ts: '2026-11-21 10:00:00.000' });
    expect(record.row).toBe(record.row);
  });
});
