// How rows become JSONEachRow lines for both analytics transports: plain JSON values as
// JSON.stringify writes them, Dates as ClickHouse's UTC text, bigints as quoted digits, Maps as
// objects and Sets as arrays, wherever in the row they are.
import { describe, expect, it } from '@jest/globals';
import { encodeRow } from '../../lib/stores/analytics/transport.ts';

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
