import { describe, expect, it } from '@jest/globals';
import { isoTimestamp } from '../../lib/ingest/context.ts';
import { seededRandom } from '../support/seeded-random.ts';

describe('isoTimestamp', () => {
  it('formats every millisecond as Date#toISOString does, within a second and across seconds', () => {
    const start = Date.UTC(2026, 10, 30, 23, 59, 58, 990);
    for (let ms = start; ms < start + 2_100; ms++) expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
  });

  it('formats times far apart, in either order, before 1970 and past year 9999', () => {
    const next = seededRandom(7);
    const times = [0, -1, -999, -1_000, -62_198_755_200_000, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -8.64e15];
    for (let i = 0; i < 2_000; i++) times.push(Math.floor((next() - 0.5) * 2e13));
    for (const ms of times) expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
  });

  it('refuses an invalid time as Date#toISOString does', () => {
    expect(() => isoTimestamp(Number.NaN)).toThrow(RangeError);
    expect(() => isoTimestamp(8.64e15 + 1)).toThrow(RangeError);
  });
});
