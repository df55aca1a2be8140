// Visits from cookieless visitor ids: a visitor's activity belongs to one session until it has been
// idle for the timeout. Kept in a bounded in-memory map (oldest visitors forgotten first); a
// forgotten or restarted node simply starts a new session for the visitor. Each session carries
// its visit's running state (lib/ingest/visits.ts), which turns hits into `visits` rows.
import { randomBytes } from 'node:crypto';
import { type PageviewFacts, type PendingActivity, stateReference, type VisitState, visitRow, withEvent, withPageview } from './visits.ts';

export interface SessionTouch {
  /** UInt64 as a decimal string. */
  sessionId: string;
  /** First hit of the session: its entry page. */
  isEntry: boolean;
  visit: VisitLedger;
}

/**
 * The visit of one session. Each change applies at once (so hits of one visit arriving together
 * build on each other) and returns the `visits` rows to store with the hit. If storing them fails,
 * `abandon()` ends the session: what was stored stays a whole visit, and the visitor's next hit
 * starts a new one instead of cancelling a state that never reached the store.
 */
export interface VisitLedger {
  pageview(hit: PageviewFacts): Record<string, unknown>[];
  event(event: { engagementMs?: number }): Record<string, unknown>[];
  abandon(): void;
}

export interface SessionTracker {
  touch(siteId: string, visitorKey: string, atMs: number): SessionTouch;
  size(): number;
}

interface Session {
  sessionId: string;
  /** Event time of the latest hit (server replay may send old times). */
  lastSeen: number;
  /** Wall-clock time of the latest hit: what idle sessions are dropped by. */
  touchedAt: number;
  abandoned: boolean;
  /** The last state written, with its version; null until the first pageview. */
  visit: VisitState | null;
  version: number;
  pending: PendingActivity;
  /** Made once with the session, so a hit allocates nothing for it. */
  ledger: VisitLedger;
}

const newSessionId = () => randomBytes(8).readBigUInt64BE().toString();

function ledgerOf(session: Session): VisitLedger {
  const replace = (next: VisitState) => {
    const rows = session.visit ? [stateReference(session.visit, session.version)] : [];
    session.visit = next;
    session.version++;
    rows.push(visitRow(next, 1, session.version));
    return rows;
  };
  return {
    pageview: (hit) => replace(withPageview(session.visit, session.pending, hit)),
    event(event) {
      if (session.visit) return replace(withEvent(session.visit, event));
      if (event.engagementMs === undefined) session.pending.events++;
      else session.pending.engagementMs += event.engagementMs;
      return [];
    },
    abandon() {
      session.abandoned = true;
    },
  };
}

export function createSessionTracker(options: { timeoutMs: number; maxEntries?: number; clock?: () => number }): SessionTracker {
  const maxEntries = options.maxEntries ?? 500_000;
  const clock = options.clock ?? Date.now;
  const sessions = new Map<string, Session>();
  /**
   * Sessions nobody touched for the timeout are over: dropped with their visit's state, so memory
   * follows the visitors active now rather than everyone seen since the start. The map is in
   * touch order, so the idle ones are at its front.
   */
  const dropIdle = (now: number) => {
    for (const [key, session] of sessions) {
      if (now - session.touchedAt <= options.timeoutMs) break;
      sessions.delete(key);
    }
  };
  return {
    touch(siteId, visitorKey, atMs) {
      const now = clock();
      dropIdle(now);
      const key = `${siteId}:${visitorKey}`;
      const known = sessions.get(key);
      if (known && !known.abandoned && atMs - known.lastSeen <= options.timeoutMs && atMs >= known.lastSeen - options.timeoutMs) {
        // Re-insert so the Map's order stays least-recently-seen first.
        sessions.delete(key);
        known.lastSeen = Math.max(known.lastSeen, atMs);
        known.touchedAt = now;
        sessions.set(key, known);
        return { sessionId: known.sessionId, isEntry: false, visit: known.ledger };
      }
      if (known) sessions.delete(key);
      else if (sessions.size >= maxEntries) sessions.delete(sessions.keys().next().value!);
      const fresh = { sessionId: newSessionId(), lastSeen: atMs, touchedAt: now, abandoned: false, visit: null, version: 0, pending: { events: 0, engagementMs: 0 } } as Session;
      fresh.ledger = ledgerOf(fresh);
      sessions.set(key, fresh);
      return { sessionId: fresh.sessionId, isEntry: true, visit: fresh.ledger };
    },
    size: () => sessions.size,
  };
}
