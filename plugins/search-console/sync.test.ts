// Which days a sync run fetches: everything the API keeps the first time, then from the day after
// the last one recorded, always with the last three (which Google revises), never today.
import { describe, expect, it } from '@jest/globals';
import { daysToSync } from './sync.ts';

const today = new Date('2026-03-10T15:00:00Z');

describe('daysToSync', () => {
  it('fetches the backfill, oldest first, up to yesterday, the first time', () => {
    expect(daysToSync(null, today, 4)).toEqual(['2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09']);
  });

  it('resumes at the day after the last one recorded', () => {
    expect(daysToSync('2026-02-20', today, 30)[0]).toBe('2026-02-21');
    expect(daysToSync('2026-02-20', today, 30).at(-1)).toBe('2026-03-09');
  });

  it('fetches the last three days again once up to date', () => {
    expect(daysToSync('2026-03-09', today, 486)).toEqual(['2026-03-07', '2026-03-08', '2026-03-09']);
  });

  it('never goes back further than the backfill, whatever was recorded', () => {
    expect(daysToSync('2025-01-01', today, 2)).toEqual(['2026-03-08', '2026-03-09']);
  });
});
