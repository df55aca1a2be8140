// The running state of a visit and its rows in the `visits` table
// (lib/stores/analytics/migrations/0003_visits.sql). The ingest writer folds each stored pageview
// and event into its visit's state and stores the new state (sign 1, next version) with the
// cancellation of the one it replaces (sign -1, that state's version): lib/ingest/visit-states.ts.
//
// A visit exists from its first pageview: events that arrive before it are counted into the
// state but write nothing until then. Its day (`start`) and entry and acquisition columns are
// those of that first pageview and never change afterwards; an out-of-order pageview from
// server-side replay only moves `first_ts` (so the duration stays last − first pageview).

/**
 * Distinct pages (and hostnames) a visit lists. Every pageview rewrites the visit's row, so an
 * unbounded list would make a crawler-like visit of thousands of pages cost its whole history on
 * every hit; past this many, further new pages still count as pageviews but are not listed (a
 * `page` filter or the pages breakdown does not see them in that visit).
 */
export const MAX_VISIT_PAGES = 50;

/** What a visit row needs from the hit that created or extended it. */
export interface PageviewFacts {
  ts: string;
  /** The hit's row, as journaled. */
  columns: Record<string, string | number>;
}

export interface VisitState {
  siteId: string;
  visitId: string;
  visitorId: string;
  start: string;
  firstTs: string;
  lastTs: string;
  pageviews: number;
  /** Custom events (everything but `$engagement`): a visit with one is not a bounce. */
  events: number;
  engagementMs: number;
  entryPage: string;
  exitPage: string;
  pages: SortedCounts;
  hostnames: SortedCounts;
  /** Acquisition and client columns of the first pageview. */
  origin: Record<string, string | number>;
}

/** Counted before the first pageview; carried into the visit once it starts. */
export interface PendingActivity {
  events: number;
  engagementMs: number;
}

/** The columns a visit takes from its first pageview (the stats API filters and groups by them). */
export const ORIGIN_COLUMNS = [
  'referrer',
  'referrer_source',
  'channel',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'country',
  'region',
  'browser',
  'os',
  'device',
] as const;

/**
 * Distinct keys in code-unit order with their counts, as the row lists them. Never changed once
 * made: a state's row shares these arrays, and the next state shares `keys` when no new key came.
 * A pageview thus costs one copy of the counts instead of a copied Map sorted twice (once for the
 * new state's row, once for the cancelled one's).
 */
export interface SortedCounts {
  readonly keys: readonly string[];
  readonly counts: readonly number[];
}

const single = (key: string): SortedCounts => ({ keys: [key], counts: [1] });

/** Index of `key` in `keys`, or -(where it would go) - 1. */
function search(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const probe = keys[middle];
    if (probe < key) low = middle + 1;
    else if (probe > key) high = middle - 1;
    else return middle;
  }
  return -low - 1;
}

function increment(list: SortedCounts, key: string): SortedCounts {
  const at = search(list.keys, key);
  if (at >= 0) {
    const counts = list.counts.slice();
    counts[at]++;
    return { keys: list.keys, counts };
  }
  if (list.keys.length >= MAX_VISIT_PAGES) return list;
  const to = -at - 1;
  return { keys: [...list.keys.slice(0, to), key, ...list.keys.slice(to)], counts: [...list.counts.slice(0, to), 1, ...list.counts.slice(to)] };
}

/** The state after one more pageview (or the first one, when `state` is null). */
export function withPageview(state: VisitState | null, pending: PendingActivity, hit: PageviewFacts): VisitState {
  const path = String(hit.columns.path);
  const hostname = String(hit.columns.hostname);
  if (state === null) {
    const origin: Record<string, string | number> = {};
    for (const column of ORIGIN_COLUMNS) origin[column] = hit.columns[column] ?? '';
    return {
      siteId: String(hit.columns.site_id),
      visitId: String(hit.columns.session_id),
      visitorId: String(hit.columns.visitor_id),
      start: hit.ts,
      firstTs: hit.ts,
      lastTs: hit.ts,
      pageviews: 1,
      events: pending.events,
      engagementMs: pending.engagementMs,
      entryPage: path,
      exitPage: path,
      pages: single(path),
      hostnames: single(hostname),
      origin,
    };
  }
  // ISO-8601 UTC strings of one format compare in time order.
  const latest = hit.ts >= state.lastTs;
  const earliest = hit.ts.localeCompare(state.firstTs) < 0;
  return {
    ...state,
    firstTs: earliest ? hit.ts : state.firstTs,
    lastTs: latest ? hit.ts : state.lastTs,
    pageviews: state.pageviews + 1,
    exitPage: latest ? path : state.exitPage,
    pages: increment(state.pages, path),
    hostnames: increment(state.hostnames, hostname),
  };
}

/** The state after an event: `$engagement` adds its time, any other event counts as one. */
export function withEvent(state: VisitState, event: { engagementMs?: number }): VisitState {
  return event.engagementMs === undefined ? { ...state, events: state.events + 1 } : { ...state, engagementMs: state.engagementMs + event.engagementMs };
}

/** One row of the `visits` table for a state. */
export function visitRow(state: VisitState, sign: 1 | -1, version: number): Record<string, unknown> {
  return {
    site_id: state.siteId,
    session_id: state.visitId,
    sign,
    version,
    visitor_id: state.visitorId,
    start: state.start,
    first_ts: state.firstTs,
    last_ts: state.lastTs,
    visit_pageviews: state.pageviews,
    events: state.events,
    visit_engagement_ms: state.engagementMs,
    entry_page: state.entryPage,
    exit_page: state.exitPage,
    pages: state.pages.keys,
    page_hits: state.pages.counts,
    hostnames: state.hostnames.keys,
    hostname_hits: state.hostnames.counts,
    ...state.origin,
  };
}

/**
 * Marks a cancellation journaled by reference by an earlier version, which journaled a visit's
 * rows with each hit: the key of the state it cancels (`site_id`, `session_id`, `version`, and
 * `start`), no other column. The writer fills in the cancelled row before inserting it.
 */
const REFERENCE_FIELD = '$reference';

/** Which state of which visit a `visits` row is: the pair a cancellation shares with its state. */
export interface VisitStateKey {
  /** Site, visit and version: a state and its cancellation have the same. */
  key: string;
  sign: number;
  /** A cancellation by reference (REFERENCE_FIELD), whose row the writer has to fill in. */
  reference?: boolean;
}

export const visitStateKey = (row: Record<string, unknown>): VisitStateKey => {
  const key = `${row.site_id}|${row.session_id}|${row.version}`;
  return row[REFERENCE_FIELD] === 1 ? { key, sign: row.sign as number, reference: true } : { key, sign: row.sign as number };
};

/**
 * Drops the visit states that are written and cancelled within the same records (a writer's batch
 * of a journal that holds visit rows): both rows of such a pair would only cancel out in the
 * store. What is left per visit is the cancellation of the state before these records and the
 * last state. `stateOf` reads a `visits` record's state key.
 */
export function withoutPassingStates<T extends { table: string }>(records: T[], stateOf: (record: T) => VisitStateKey): T[] {
  // Each record's state is read once, into sets of keys.
  const states = records.map((record) => (record.table === 'visits' ? stateOf(record) : undefined));
  const written = new Set<string>();
  for (const state of states) if (state?.sign === 1) written.add(state.key);
  const passing = new Set<string>();
  for (const state of states) if (state?.sign === -1 && written.has(state.key)) passing.add(state.key);
  if (passing.size === 0) return records;
  return records.filter((_, i) => {
    const state = states[i];
    return state === undefined || !passing.has(state.key);
  });
}
