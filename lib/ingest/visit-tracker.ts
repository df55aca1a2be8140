// Visits from cookieless visitor ids: a visitor's activity belongs to one visit until it has been
// idle for the timeout. Kept in a bounded in-memory map (oldest visitors forgotten first); a
// forgotten or restarted node simply starts a new visit for the visitor. Each tracked visit carries
// its running state (lib/ingest/visits.ts), which turns hits into `visits` rows. (The stored column
// is `session_id`, the analytics contract's name for a visit's id.)
import { randomBytes } from 'node:crypto';
import { type PageviewFacts, type PendingActivity, stateReference, type VisitState, visitRow, withEvent, withPageview } from './visits.ts';

export interface VisitTouch {
  /** UInt64 as a decimal string. */
  visitId: string;
  /** First hit of the visit: its entry page. */
  isEntry: boolean;
  visit: VisitLedger;
}

/**
 * The running visit of one visitor. Each change applies at once (so hits of one visit arriving together
 * build on each other) and returns the `visits` rows to store with the hit. If storing them fails,
 * `abandon()` ends the visit: what was stored stays a whole visit, and the visitor's next hit
 * starts a new one instead of cancelling a state that never reached the store.
 */
export interface VisitLedger {
  pageview(hit: PageviewFacts): Record<string, unknown>[];
  event(event: { engagementMs?: number }): Record<string, unknown>[];
  abandon(): void;
}

export interface VisitTracker {
  touch(siteId: string, visitorKey: string, atMs: number): VisitTouch;
  size(): number;
}

interface TrackedVisit {
  visitId: string;
  /** Event time of the latest hit (server replay may send old times). */
  lastSeen: number;
  /** Wall-clock time of the latest hit: what idle visits are dropped by. */
  touchedAt: number;
  abandoned: boolean;
  /** The last state written, with its version; null until the first pageview. */
  visit: VisitState | null;
  version: number;
  pending: PendingActivity;
  /** Made once with the visit, so a hit allocates nothing for it. */
  ledger: VisitLedger;
}

const newVisitId = () => randomBytes(8).readBigUInt64BE().toString();

function ledgerOf(tracked: TrackedVisit): VisitLedger {
  const replace = (next: VisitState) => {
    const rows = tracked.visit ? [stateReference(tracked.visit, tracked.version)] : [];
    tracked.visit = next;
    tracked.version++;
    rows.push(visitRow(next, 1, tracked.version));
    return rows;
  };
  return {
    pageview: (hit) => replace(withPageview(tracked.visit, tracked.pending, hit)),
    event(event) {
      if (tracked.visit) return replace(withEvent(tracked.visit, event));
      if (event.engagementMs === undefined) tracked.pending.events++;
      else tracked.pending.engagementMs += event.engagementMs;
      return [];
    },
    abandon() {
      tracked.abandoned = true;
    },
  };
}

export function createVisitTracker(options: { timeoutMs: number; maxEntries?: number; clock?: () => number }): VisitTracker {
  const maxEntries = options.maxEntries ?? 500_000;
  const clock = options.clock ?? Date.now;
  const visits = new Map<string, TrackedVisit>();
  /**
   * Visits nobody touched for the timeout are over: dropped with their visit's state, so memory
   * follows the visitors active now rather than everyone seen since the start. The map is in
   * touch order, so the idle ones are at its front.
   */
  const dropIdle = (now: number) => {
    for (const [key, visit] of visits) {
      if (now - visit.touchedAt <= options.timeoutMs) break;
      visits.delete(key);
    }
  };
  return {
    touch(siteId, visitorKey, atMs) {
      const now = clock();
      dropIdle(now);
      const key = `${siteId}:${visitorKey}`;
      const known = visits.get(key);
      if (known && !known.abandoned && atMs - known.lastSeen <= options.timeoutMs && atMs >= known.lastSeen - options.timeoutMs) {
        // Re-insert so the Map's order stays least-recently-seen first.
        visits.delete(key);
        known.lastSeen = Math.max(known.lastSeen, atMs);
        known.touchedAt = now;
        visits.set(key, known);
        return { visitId: known.visitId, isEntry: false, visit: known.ledger };
      }
      if (known) visits.delete(key);
      else if (visits.size >= maxEntries) visits.delete(visits.keys().next().value!);
      const fresh = { visitId: newVisitId(), lastSeen: atMs, touchedAt: now, abandoned: false, visit: null, version: 0, pending: { events: 0, engagementMs: 0 } } as TrackedVisit;
      fresh.ledger = ledgerOf(fresh);
      visits.set(key, fresh);
      return { visitId: fresh.visitId, isEntry: true, visit: fresh.ledger };
    },
    size: () => visits.size,
  };
}
