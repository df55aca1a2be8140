import { describe, expect, it } from '@jest/globals';
import { createVisitTracker } from '../../lib/ingest/visit-tracker.ts';

const MINUTE = 60_000;

describe('createVisitTracker', () => {
  it('keeps a visitor in one visit while they are active, and starts a new one after 30 idle minutes', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE });
    const first = visits.touch('v1', 0);
    const during = visits.touch('v1', 29 * MINUTE);
    const stillDuring = visits.touch('v1', 58 * MINUTE);
    const after = visits.touch('v1', 89 * MINUTE);
    expect([first.isEntry, during.isEntry, stillDuring.isEntry, after.isEntry]).toEqual([true, false, false, true]);
    expect(during.visitId).toBe(first.visitId);
    expect(stillDuring.visitId).toBe(first.visitId);
    expect(after.visitId).not.toBe(first.visitId);
    expect(first.visitId).toMatch(/^\d+$/);
  });

  it('separates visitors', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE });
    const a = visits.touch('v1', 0);
    expect(visits.touch('v2', 0).visitId).not.toBe(a.visitId);
    expect(visits.touch('v1', 0).visitId).toBe(a.visitId);
  });

  it('forgets the least recently seen visitor when full', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE, maxEntries: 2 });
    visits.touch('a', 0);
    visits.touch('b', 0);
    visits.touch('a', 1);
    visits.touch('c', 2);
    expect(visits.size()).toBe(2);
    expect(visits.touch('a', 3).isEntry).toBe(false);
    expect(visits.touch('b', 4).isEntry).toBe(true);
  });
});

describe('a visit whose hit could not be stored', () => {
  it('ends: the next hit starts a new visit, as its entry', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE });
    const failed = visits.touch('v1', 0);
    failed.visit.abandon();
    const next = visits.touch('v1', 1000);
    expect([next.isEntry, next.visitId === failed.visitId]).toEqual([true, false]);
    expect(visits.touch('v1', 2000)).toMatchObject({ visitId: next.visitId, isEntry: false });
  });
});

describe('idle visits', () => {
  it('are dropped with their visit once nobody touched them for the timeout (wall clock), so replayed old times do not age them', () => {
    let now = 1_000_000;
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE, clock: () => now });
    const replayed = visits.touch('old', Date.UTC(2024, 0, 1));
    visits.touch('a', now);
    now += 20 * MINUTE;
    visits.touch('b', now);
    expect(visits.touch('old', Date.UTC(2024, 0, 1, 0, 5)).visitId).toBe(replayed.visitId);
    now += 15 * MINUTE; // 'a' is 35 minutes idle, 'b' and 'old' 15
    visits.touch('c', now);
    expect(visits.size()).toBe(3);
    now += 31 * MINUTE;
    visits.touch('d', now);
    expect(visits.size()).toBe(1);
  });
});

describe('a visit kept active past the timeout', () => {
  it('stays one visit, and once idle is dropped within two timeouts of its last hit', () => {
    let now = 0;
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE, clock: () => now });
    const first = visits.touch('active', now);
    for (let minute = 20; minute <= 120; minute += 20) {
      now = minute * MINUTE;
      expect(visits.touch('active', now)).toMatchObject({ visitId: first.visitId, isEntry: false });
    }
    expect(visits.size()).toBe(1);
    now += 61 * MINUTE;
    visits.touch('other', now);
    expect(visits.size()).toBe(1);
  });
});

describe('visit ids', () => {
  it('are distinct 64-bit numbers, past the random bytes drawn at a time', () => {
    const visits = createVisitTracker({ timeoutMs: 30 * MINUTE });
    const ids = Array.from({ length: 2000 }, (_, i) => visits.touch(`visitor-${i}`, 0).visitId);
    expect(new Set(ids).size).toBe(2000);
    for (const id of ids) expect(BigInt(id) < 2n ** 64n && /^\d+$/.test(id)).toBe(true);
    // Random, not counted: the ids spread over the whole range.
    expect(ids.filter((id) => BigInt(id) >= 2n ** 63n).length).toBeGreaterThan(800);
  });
});
