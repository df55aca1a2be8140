// Visits from cookieless visitor ids: a visitor's activity belongs to one session until it has been
// idle for the timeout. Kept in a bounded in-memory map (oldest visitors forgotten first); a
// forgotten or restarted node simply starts a new session for the visitor.
import { randomBytes } from 'node:crypto';

export interface SessionTouch {
  /** UInt64 as a decimal string. */
  sessionId: string;
  /** First hit of the session: its entry page. */
  isEntry: boolean;
}

export interface SessionTracker {
  touch(siteId: string, visitorKey: string, atMs: number): SessionTouch;
  size(): number;
}

const newSessionId = () => randomBytes(8).readBigUInt64BE().toString();

export function createSessionTracker(options: { timeoutMs: number; maxEntries?: number }): SessionTracker {
  const maxEntries = options.maxEntries ?? 500_000;
  const sessions = new Map<string, { sessionId: string; lastSeen: number }>();
  return {
    touch(siteId, visitorKey, atMs) {
      const key = `${siteId}:${visitorKey}`;
      const known = sessions.get(key);
      if (known && atMs - known.lastSeen <= options.timeoutMs && atMs >= known.lastSeen - options.timeoutMs) {
        // Re-insert so the Map's order stays least-recently-seen first.
        sessions.delete(key);
        known.lastSeen = Math.max(known.lastSeen, atMs);
        sessions.set(key, known);
        return { sessionId: known.sessionId, isEntry: false };
      }
      if (known) sessions.delete(key);
      else if (sessions.size >= maxEntries) sessions.delete(sessions.keys().next().value!);
      const fresh = { sessionId: newSessionId(), lastSeen: atMs };
      sessions.set(key, fresh);
      return { sessionId: fresh.sessionId, isEntry: true };
    },
    size: () => sessions.size,
  };
}
