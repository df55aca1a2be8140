// Visits from cookieless visitor ids: a visitor's activity belongs to one visit until it has been
// idle for the timeout. Kept in a bounded in-memory map (oldest visitors forgotten first); a
// forgotten or restarted node simply starts a new visit for the visitor. The tracker only names the
// visit a hit belongs to; the visit's state (its `visits` row) is derived from the stored hits and
// events by the ingest writer (lib/ingest/visit-states.ts). (The stored column is `session_id`, the
// analytics contract's name for a visit's id.)
import { randomFillSync } from 'node:crypto';

export interface VisitTouch {
  /** UInt64 as a decimal string. */
  visitId: string;
  /** First hit of the visit: its entry page. */
  isEntry: boolean;
  visit: VisitHandle;
}

/**
 * The running visit of one visitor. If the hit that touched it cannot be stored, `abandon()` ends
 * the visit, so the visitor's next hit starts a new one as its entry, as every stored visit has.
 */
export interface VisitHandle {
  abandon(): void;
}

export interface VisitTracker {
  /**
   * The visit a hit at `atMs` belongs to. `visitorKey` names one visitor of one site: a hashed
   * visitor id (its hash covers the site) or a key the caller made unique per site. The tracker
   * looks it up as given: a key built for each lookup would be hashed anew at every hit.
   */
  touch(visitorKey: string, atMs: number): VisitTouch;
  size(): number;
}

interface TrackedVisit {
  visitId: string;
  /** Event time of the latest hit (server replay may send old times). */
  lastSeen: number;
  /** Wall-clock time of the latest hit: what idle visits are dropped by. */
  touchedAt: number;
  /** Wall-clock time it took its place at the back of the tracker's queue. */
  queuedAt: number;
  /** Its hits (the tracker's count of them all) at its latest hit and when it was queued: touched since queued when they differ. */
  touchedHit: number;
  queuedHit: number;
  abandoned: boolean;
  /** Made once with the visit, so a hit allocates nothing for it. */
  handle: VisitHandle;
}

/**
 * Random bytes for visit ids, drawn from the system's generator 4 KiB at a time: a call per new
 * visit cost ~3% of the CPU under traffic of many short visits.
 */
const idPool = Buffer.alloc(4096);
let idPoolAt = idPool.length;

function newVisitId(): string {
  if (idPoolAt === idPool.length) {
    randomFillSync(idPool);
    idPoolAt = 0;
  }
  const id = idPool.readBigUInt64BE(idPoolAt);
  idPoolAt += 8;
  return id.toString();
}

export function createVisitTracker(options: { timeoutMs: number; maxEntries?: number; clock?: () => number }): VisitTracker {
  const maxEntries = options.maxEntries ?? 500_000;
  const clock = options.clock ?? Date.now;
  /**
   * Visits in the order they were queued, oldest first. A hit does not move its visit to the back:
   * deleting and setting a key of a long-lived Map makes V8 rebuild its table now and then straight
   * into the old generation, which a hit per request turned into full collections. A visit found at
   * the front is moved back only if it was touched since it was queued, so each active visit moves
   * at most once a timeout, and an idle one is dropped between one and two timeouts after its last hit.
   */
  const visits = new Map<string, TrackedVisit>();
  let hits = 0;
  const requeue = (key: string, visit: TrackedVisit, now: number) => {
    visits.delete(key);
    visit.queuedAt = now;
    visit.queuedHit = visit.touchedHit;
    visits.set(key, visit);
  };
  /** Visits nobody touched for the timeout are over: dropped, so memory follows the visitors active now. */
  const dropIdle = (now: number) => {
    for (const [key, visit] of visits) {
      // Everything behind it was queued later, so it cannot be idle for the timeout either.
      if (now - visit.queuedAt <= options.timeoutMs) break;
      if (now - visit.touchedAt <= options.timeoutMs) requeue(key, visit, now);
      else visits.delete(key);
    }
  };
  /** When full, the longest-queued visit not touched since it was queued goes; each touched one met on the way gets a second place at the back. */
  const dropOne = (now: number) => {
    for (const [key, visit] of visits) {
      if (visit.touchedHit === visit.queuedHit) {
        visits.delete(key);
        return;
      }
      requeue(key, visit, now);
    }
  };
  return {
    touch(key, atMs) {
      const now = clock();
      const hit = ++hits;
      dropIdle(now);
      const known = visits.get(key);
      if (known && !known.abandoned && atMs - known.lastSeen <= options.timeoutMs && atMs >= known.lastSeen - options.timeoutMs) {
        known.lastSeen = Math.max(known.lastSeen, atMs);
        known.touchedAt = now;
        known.touchedHit = hit;
        return { visitId: known.visitId, isEntry: false, visit: known.handle };
      }
      if (known) visits.delete(key);
      else if (visits.size >= maxEntries) dropOne(now);
      const fresh = { visitId: newVisitId(), lastSeen: atMs, touchedAt: now, queuedAt: now, touchedHit: hit, queuedHit: hit, abandoned: false } as TrackedVisit;
      fresh.handle = {
        abandon() {
          fresh.abandoned = true;
        },
      };
      visits.set(key, fresh);
      return { visitId: fresh.visitId, isEntry: true, visit: fresh.handle };
    },
    size: () => visits.size,
  };
}
