// How rows become JSONEachRow lines for both analytics transports: plain JSON values as
// JSON.stringify writes them, Dates as ClickHouse's UTC text, bigints as quoted digits, Maps as
// objects and Sets as arrays, wherever in the row they are; compact lines (JSONCompactEachRow) the
// same, as the values of a layout's columns.
import { describe, expect, it } from '@jest/globals';
import { encodeCompactRow, encodeRow, rowWriter } from '../../lib/stores/analytics/transport.ts';

describe('encodeRow', () => {
  it('writes a row of plain values as JSON', () => {
    const row = { path: '/a"b', n: 1.5, ok: true, none: null, pages: ['/a', '/b'], hits: [1, 2], props: { plan: 'pro' } };
    expect(encodeRow(row)).toBe('{"path":"/a\\"b","n":1.5,"ok":true,"none":null,"pages":["/a","/b"],"hits":[1,2],"props":{"plan":"pro"}}');
  });

  it('converts Dates, bigints, Maps and Sets at the top level and inside arrays and objects', () => {
    const at = new Date('2024-03-05T06:07:08.009Z');
    expect(encodeRow({ ts: at, id: 18446744073709551615n })).toBe('{"ts":"2024-03-05 06:07:08.009","id":"18446744073709551615"}');
    expect(encodeRow({ props: new Map([['a', '1']]), tags: new Set(['x']) })).toBe('{"props":{"a":"1"},"tags":["x"]}');
    expect(encodeRow({ list: [at, 2n], nested: { at, id: 3n } })).toBe(
      '{"list":["2024-03-05 06:07:08.009","2"],"nested":{"at":"2024-03-05 06:07:08.009","id":"3"}}',
    );
  });
});

describe('encodeCompactRow', () => {
  const columns = ['ts', 'id', 'path', 'props', 'pages'];

  it('writes the values of the columns in their order, null for a column the row lacks', () => {
    expect(encodeCompactRow(columns, { pages: ['/a'], path: '/a"b', id: 7, props: { plan: 'pro' } })).toBe('[null,7,"/a\\"b",{"plan":"pro"},["/a"]]');
  });

  it('converts Dates, bigints, Maps and Sets in any column, at the top level and one level down', () => {
    const at = new Date('2024-03-05T06:07:08.009Z');
    expect(encodeCompactRow(columns, { ts: at, id: 18446744073709551615n, path: '/', props: new Map([['a', '1']]), pages: new Set(['x']) })).toBe(
      '["2024-03-05 06:07:08.009","18446744073709551615","/",{"a":"1"},["x"]]',
    );
    expect(encodeCompactRow(columns, { ts: '2024-03-05 06:07:08.009', id: 1, path: '/', props: { at }, pages: [at, 2n] })).toBe(
      '["2024-03-05 06:07:08.009",1,"/",{"at":"2024-03-05 06:07:08.009"},["2024-03-05 06:07:08.009","2"]]',
    );
  });

  it('encodes only the columns, whatever else the row holds', () => {
    expect(encodeCompactRow(['path'], { path: '/', received: new Date(0), id: 1n })).toBe('["/"]');
  });

  it('reads rows of any shape with the same columns, and takes no column name that is not an identifier', () => {
    expect([encodeCompactRow(columns, { id: 1 }), encodeCompactRow(columns, { path: '/', extra: true, id: 2 })]).toEqual(['[null,1,null,null,null]', '[null,2,"/",null,null]']);
    expect(() => encodeCompactRow(['path', 'x) || process.exit(1'], { path: '/' })).toThrow(/Invalid column name/);
  });
});

describe('rowWriter', () => {
  it("sets a row's columns from a compact line's values in their order, overwriting what the row had", () => {
    const columns = ['ts', 'id', 'path'];
    const row: Record<string, unknown> = { path: '/old', kept: true };
    expect(rowWriter(columns)(row, ['2024-03-05 06:07:08.009', 7, '/new'])).toBe(row);
    expect(row).toEqual({ ts: '2024-03-05 06:07:08.009', id: 7, path: '/new', kept: true });
    expect(JSON.parse(encodeCompactRow(columns, row))).toEqual(['2024-03-05 06:07:08.009', 7, '/new']);
  });

  it('takes no column name that is not an identifier', () => {
    expect(() => rowWriter(['path', 'x = process.exit(1); row.y'])).toThrow(/Invalid column name/);
  });
});
