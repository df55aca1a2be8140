// Goal conversions, counted and detected. Counted: per goal over a date range in ClickHouse
// (unique converting visitors, matching hits/events, rate, revenue). Detected: as the ingest
// writer stores rows, the first match per visit (session) and goal is a new conversion, announced
// once as `goal.converted` with an event id derived from (row id, goal id), so a replayed batch
// yields the same ids and the webhooks' deduplication keeps a receiver from seeing it twice.
import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { TimeRange } from '../analytics/range.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { Goal } from './goals.ts';
import { compileMatcher, pathPatternToLike, type StoredRow } from './matcher.ts';

// ——— Counted ———

export interface GoalStatsRow {
  goal_id: string;
  name: string;
  type: Goal['type'];
  /** Unique visitors with at least one matching hit or event in the range. */
  conversions: number;
  /** Matching hits (path goals) or events (event goals). */
  events: number;
  /** conversions as a percentage of the range's visitors, one decimal. */
  conversion_rate: number;
  revenue?: { currency: string; total: number };
}

interface Counted {
  goal: number;
  conversions: string;
  events: string;
  revenue?: string | null;
}

/** A percentage with one decimal; 0 when there is nothing to divide by. */
export const percent = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 1000) / 10 : 0);

/**
 * One query per table whatever the number of goals: the goals' matchers are bound as arrays, and
 * each row is expanded (ARRAY JOIN) into the 1-based indexes of the goals it matches.
 */
export async function goalStats(analytics: AnalyticsStore, site: { id: string; tenant: string }, goals: readonly Goal[], range: TimeRange): Promise<GoalStatsRow[]> {
  // The dashboard asks on every load; a site without goals costs no query.
  if (goals.length === 0) return [];
  const scope = { db: site.tenant, site: site.id, from: range.from, to: range.to };
  const [{ visitors }] = await analytics.query<{ visitors: string }>(
    `SELECT uniqExact(visitor_id) AS visitors FROM (
       SELECT visitor_id FROM {db:Identifier}.hits
        WHERE site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)}
       UNION ALL
       SELECT visitor_id FROM {db:Identifier}.events
        WHERE site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)})`,
    scope,
  );
  const pathGoals = goals.filter((g) => g.type === 'path');
  const eventGoals = goals.filter((g) => g.type === 'event');
  const counted = new Map<Goal, Counted>();

  if (pathGoals.length > 0) {
    const rows = await analytics.query<Counted>(
      `SELECT goal, uniqExact(visitor_id) AS conversions, count() AS events
         FROM {db:Identifier}.hits
        ARRAY JOIN arrayFilter(i -> path LIKE {patterns:Array(String)}[i], arrayEnumerate({patterns:Array(String)})) AS goal
        WHERE site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)}
        GROUP BY goal`,
      { ...scope, patterns: pathGoals.map((g) => pathPatternToLike(g.path_pattern ?? '')) },
    );
    for (const row of rows) counted.set(pathGoals[row.goal - 1], row);
  }

  if (eventGoals.length > 0) {
    const conditions = eventGoals.map((g) => g.property_conditions ?? []);
    const rows = await analytics.query<Counted>(
      `SELECT goal, uniqExact(visitor_id) AS conversions, count() AS events, toString(sum(revenue)) AS revenue
         FROM {db:Identifier}.events
        ARRAY JOIN arrayFilter(
          i -> name = {names:Array(String)}[i]
               AND arrayAll((k, v) -> mapContains(props, k) AND props[k] = v, {keys:Array(Array(String))}[i], {values:Array(Array(String))}[i]),
          arrayEnumerate({names:Array(String)})) AS goal
        WHERE site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)}
          AND name IN {names:Array(String)}
        GROUP BY goal`,
      {
        ...scope,
        names: eventGoals.map((g) => g.event_name ?? ''),
        keys: conditions.map((list) => list.map((c) => c.key)),
        values: conditions.map((list) => list.map((c) => c.value)),
      },
    );
    for (const row of rows) counted.set(eventGoals[row.goal - 1], row);
  }

  const total = Number(visitors);
  const result = goals.map((goal): GoalStatsRow => {
    const row = counted.get(goal);
    const conversions = Number(row?.conversions ?? 0);
    const stats: GoalStatsRow = { goal_id: goal.id, name: goal.name, type: goal.type, conversions, events: Number(row?.events ?? 0), conversion_rate: percent(conversions, total) };
    if (goal.revenue) stats.revenue = { currency: goal.revenue.currency, total: Number(row?.revenue ?? 0) };
    return stats;
  });
  // Most converting first; the name breaks ties so the order is stable.
  return result.sort((a, b) => b.conversions - a.conversions || a.name.localeCompare(b.name));
}

// ——— Detected ———

/** The data of an internal `goal.converted` event (README: Webhooks, Events), plus its stable id. */
export interface Conversion {
  /** UUID derived from (row id, goal id): the same stored row and goal always give the same id. */
  event_id: string;
  site_id: string;
  goal_id: string;
  goal_name: string;
  goal_type: Goal['type'];
  converted_at: string;
}

export interface ConversionDetector {
  /** The new conversions among rows the ingest writer just stored, in their order. */
  detect(records: readonly StoredRow[]): Promise<Conversion[]>;
  /**
   * Takes back conversions `detect` returned that could not be recorded, so the same rows,
   * written again by the ingest writer, are found again.
   */
  forget(conversions: readonly Conversion[]): void;
  /** Forget a site's cached goals (all sites without an argument) after they changed. */
  invalidate(siteId?: string): void;
}

export interface ConversionDetectorOptions {
  goalsOf(siteId: string): Promise<Goal[]>;
  /** How many (session, goal) pairs are remembered as converted; the least recent go first. */
  maxRemembered?: number;
  /** Goals are re-read after this long even without an invalidation (a missed broadcast heals). */
  goalsTtlMs?: number;
  maxCachedSites?: number;
  now?: () => number;
}

/** Rows read between two turns of the event loop while a batch is judged. */
const DECODE_SLICE_ROWS = 1000;

/** Fixed forever: changing it would give replayed rows new ids. */
const CONVERSION_NAMESPACE = Buffer.from('233daefcfce64cafbe1fa0214e603a22', 'hex');

/** A name-based (version 5, SHA-1) UUID of `<row id>:<goal id>` in Plumb's conversion namespace. */
export function conversionEventId(rowId: string, goalId: string): string {
  const hash = createHash('sha1').update(CONVERSION_NAMESPACE).update(`${rowId}:${goalId}`).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface CompiledGoal {
  goal: Goal;
  matches: (row: StoredRow) => boolean;
}

export function createConversionDetector(options: ConversionDetectorOptions): ConversionDetector {
  const maxRemembered = options.maxRemembered ?? 100_000;
  const ttl = options.goalsTtlMs ?? 60_000;
  const maxSites = options.maxCachedSites ?? 10_000;
  const now = options.now ?? Date.now;
  const sites = new Map<string, { goals: CompiledGoal[]; expires: number }>();
  /** Keys `<goal id>:<session id>` in least-recently-seen-first order (a Map keeps insertion order). */
  const converted = new Map<string, true>();
  /** The `converted` key of each conversion handed out, for `forget`. */
  const keyOf = new WeakMap<Conversion, string>();
  /** Batches are judged one after another, so "first in the visit" follows the order they were stored in. */
  let queue: Promise<unknown> = Promise.resolve();

  async function goalsOf(siteId: string): Promise<CompiledGoal[]> {
    const cached = sites.get(siteId);
    if (cached && cached.expires > now()) return cached.goals;
    const goals = (await options.goalsOf(siteId)).map((goal) => ({ goal, matches: compileMatcher(goal) }));
    sites.delete(siteId);
    if (sites.size >= maxSites) sites.delete(sites.keys().next().value!);
    sites.set(siteId, { goals, expires: now() + ttl });
    return goals;
  }

  /** True the first time a session converts on a goal (as far as the bounded memory reaches). */
  function firstInVisit(goalId: string, sessionId: string): boolean {
    const key = `${goalId}:${sessionId}`;
    if (converted.has(key)) {
      converted.delete(key);
      converted.set(key, true);
      return false;
    }
    if (converted.size >= maxRemembered) converted.delete(converted.keys().next().value!);
    converted.set(key, true);
    return true;
  }

  async function judge(records: readonly StoredRow[]): Promise<Conversion[]> {
    const siteOf = (r: StoredRow) => r.siteId ?? String(r.row.site_id);
    const rows = records.filter((r) => r.table === 'hits' || r.table === 'events');
    const goalsBySite = new Map<string, CompiledGoal[]>();
    for (const siteId of new Set(rows.map(siteOf))) goalsBySite.set(siteId, await goalsOf(siteId));
    const found: Conversion[] = [];
    // Only rows of sites with goals are read; the sink may still hold the others encoded, and
    // decoding them would cost a JSON parse each. Those read go a slice at a time, so a batch of
    // 10,000 rows does not hold the event loop in one go.
    let read = 0;
    for (const record of rows) {
      const siteId = siteOf(record);
      const goals = goalsBySite.get(siteId) ?? [];
      if (goals.length === 0) continue;
      if (++read % DECODE_SLICE_ROWS === 0) await nextTurn();
      for (const { goal, matches } of goals) {
        if (!matches(record) || !firstInVisit(goal.id, String(record.row.session_id))) continue;
        const rowId = String(record.table === 'hits' ? record.row.hit_id : record.row.event_id);
        const conversion: Conversion = {
          event_id: conversionEventId(rowId, goal.id),
          site_id: siteId,
          goal_id: goal.id,
          goal_name: goal.name,
          goal_type: goal.type,
          converted_at: new Date(String(record.row.ts)).toISOString(),
        };
        keyOf.set(conversion, `${goal.id}:${String(record.row.session_id)}`);
        found.push(conversion);
      }
    }
    return found;
  }

  return {
    detect(records) {
      const run = queue.then(() => judge(records));
      queue = run.catch(() => undefined);
      return run;
    },
    forget(conversions) {
      for (const conversion of conversions) {
        const key = keyOf.get(conversion);
        if (key !== undefined) converted.delete(key);
      }
    },
    invalidate(siteId) {
      if (siteId === undefined) sites.clear();
      else sites.delete(siteId);
    },
  };
}
