import { describe, expect, it } from '@jest/globals';
import { createSessionTracker } from '../../lib/ingest/sessions.ts';

const MINUTE = 60_000;

describe('createSessionTracker', () => {
  it('keeps a visitor in one session while they are active, and starts a new one after 30 idle minutes', () => {
    const sessions = createSessionTracker({ timeoutMs: 30 * MINUTE });
    const first = sessions.touch('site', 'v1', 0);
    const during = sessions.touch('site', 'v1', 29 * MINUTE);
    const stillDuring = sessions.touch('site', 'v1', 58 * MINUTE);
    const after = sessions.touch('site', 'v1', 89 * MINUTE);
    expect([first.isEntry, during.isEntry, stillDuring.isEntry, after.isEntry]).toEqual([true, false, false, true]);
    expect(during.sessionId).toBe(first.sessionId);
    expect(stillDuring.sessionId).toBe(first.sessionId);
    expect(after.sessionId).not.toBe(first.sessionId);
    expect(first.sessionId).toMatch(/^\d+$/);
  });

  it('separates visitors and sites', () => {
    const sessions = createSessionTracker({ timeoutMs: 30 * MINUTE });
    const a = sessions.touch('site-1', 'v1', 0);
    expect(sessions.touch('site-1', 'v2', 0).sessionId).not.toBe(a.sessionId);
    expect(sessions.touch('site-2', 'v1', 0).sessionId).not.toBe(a.sessionId);
  });

  it('forgets the least recently seen visitor when full', () => {
    const sessions = createSessionTracker({ timeoutMs: 30 * MINUTE, maxEntries: 2 });
    sessions.touch('s', 'a', 0);
    sessions.touch('s', 'b', 0);
    sessions.touch('s', 'a', 1);
    sessions.touch('s', 'c', 2);
    expect(sessions.size()).toBe(2);
    expect(sessions.touch('s', 'a', 3).isEntry).toBe(false);
    expect(sessions.touch('s', 'b', 4).isEntry).toBe(true);
  });
});
