// Keeps daily_breakdowns (migration 0005) counted: the leader, at once and then every ten minutes,
// fingerprints each closed UTC day of each tenant's sites, counts the days whose visits are not
// counted as they are now, and forgets the counts of days that changed or lost their visits.
// The stats read a day from the table only while its fingerprint still matches, so between a
// change and its recount the answers stay exact; they are only slower for that day.
import type { LeaderJob } from '../../cluster/leader-jobs.ts';
import { utcDay } from '../ingest/salts.ts';
import type { Runtime } from '../runtime.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { Statement } from './query/sql.ts';
import { countDayStatement, countsStatement, dayFingerprintsStatement, forgetCountsStatements, matchCounts } from './query/daily-breakdowns.ts';

const RECOUNT_MS = 600_000;
/** A day is closed once its visits are in: the writer's last batches of a day land within seconds; this leaves minutes. */
const CLOSING_MS = 15 * 60_000;
/** The first day a tenant's visits could have: every day before the closed ones. */
const EPOCH_DAY = '1970-01-01';

export interface DailyBreakdownsCount {
  /** Days counted now. */
  counted: number;
  /** Days whose visits changed while they were counted: counted at the next run. */
  moved: number;
  /** Counts forgotten: of days counted again, or whose visits are gone or imported into. */
  forgotten: number;
}

interface DayState {
  site_id: string;
  day: string;
  fingerprint: string;
}

interface Count extends DayState {
  count_id: string;
}

/** A new count's id: random, so two leaders counting one day at once keep their rows apart. */
function newCountId(): bigint {
  return crypto.getRandomValues(new BigUint64Array(1))[0];
}

/**
 * The settings of the leader's counting statements, which it runs again day after day and every
 * ten minutes: the engine would compile a statement it has met three times to machine code,
 * paging LLVM's code and memory into the node (an upgrade's count of 90 days left ~20 MiB more of
 * the engine's code resident in an idle node) for no gain (that count took 13.6–13.9 s without,
 * 14.3–16.7 with).
 */
const UNCOMPILED = 'SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0';

/** A counting statement with its settings (a trailing clause holds for a whole INSERT … SELECT … UNION ALL). */
const uncompiled = (statement: Statement): Statement => ({ sql: `${statement.sql}\n${UNCOMPILED}`, params: statement.params });

/** The UTC day (YYYY-MM-DD) before which days are closed at `now`. */
export function firstOpenDay(now: Date): string {
  return utcDay(new Date(now.getTime() - CLOSING_MS));
}

/**
 * Brings one tenant's daily_breakdowns up to its visits of the days closed at `now`, newest day
 * first (the days dashboards read most). A count is listed only if the day's fingerprint is the
 * same after its rows are written as before; otherwise its rows are deleted unlisted, unread.
 * `stopped` ends the run between two days.
 */
export async function countDailyBreakdowns(store: AnalyticsStore, db: string, now = new Date(), stopped = () => false): Promise<DailyBreakdownsCount> {
  const run = <T>(statement: Statement) => {
    const { sql, params } = uncompiled(statement);
    return store.query<T>(sql, params);
  };
  const closed = { first: EPOCH_DAY, end: firstOpenDay(now) };
  const [current, counts] = await Promise.all([run<DayState>(dayFingerprintsStatement(db, closed, undefined, true)), run<Count>(countsStatement(db))]);
  const key = (s: DayState) => `${s.site_id} ${s.day}`;
  const countsOfDay = new Map<string, Count[]>();
  for (const count of counts) {
    const ofDay = countsOfDay.get(key(count));
    if (ofDay) ofDay.push(count);
    else countsOfDay.set(key(count), [count]);
  }
  const result: DailyBreakdownsCount = { counted: 0, moved: 0, forgotten: 0 };
  const drop = async (day: DayState, countIds: string[]) => {
    for (const statement of forgetCountsStatements(db, day.site_id, day.day, countIds)) await store.command(statement.sql, statement.params);
  };
  const forget = async (day: DayState, stale: Count[]) => {
    if (stale.length === 0) return;
    await drop(
      day,
      stale.map((s) => s.count_id),
    );
    result.forgotten += stale.length;
  };
  current.sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : 0));
  for (const day of current) {
    if (stopped()) return result;
    const known = countsOfDay.get(key(day)) ?? [];
    countsOfDay.delete(key(day));
    const [kept] = matchCounts([day], known);
    if (kept) {
      // Up to date: the counts of other states, and a second count of this one, are not read.
      await forget(
        day,
        known.filter((count) => count.count_id !== kept.count),
      );
      continue;
    }
    const countId = newCountId();
    const count = uncompiled(countDayStatement(db, day.site_id, day.day, countId));
    await store.command(count.sql, count.params);
    const next = utcDay(new Date(Date.parse(`${day.day}T00:00:00Z`) + 86_400_000));
    const [after] = await run<DayState>(dayFingerprintsStatement(db, { first: day.day, end: next }, day.site_id, true));
    if (after?.fingerprint !== day.fingerprint) {
      // Never listed, so never read: deleted at once (the id is this count's alone).
      await drop(day, [countId.toString()]);
      result.moved++;
      continue;
    }
    await store.insert('daily_breakdowns_days', [{ site_id: day.site_id, day: day.day, fingerprint: day.fingerprint, count_id: countId.toString() }], { database: db });
    result.counted++;
    await forget(day, known);
  }
  if (stopped()) return result;
  // Counted days that no longer have visits of their own (deleted, moved to another team) or now have imported ones.
  for (const stale of countsOfDay.values()) await forget(stale[0], stale);
  return result;
}

/** The leader's job: every tenant counted at once, then every ten minutes; a tick while a run is going is skipped. */
export function dailyBreakdownsJob(runtime: Pick<Runtime, 'metadata' | 'analytics' | 'log'>): LeaderJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  const countAll = async () => {
    const started = performance.now();
    const analytics = runtime.analytics();
    const { rows: teams } = await runtime.metadata().query<{ id: string }>('SELECT id FROM teams ORDER BY id');
    // The teams that have analytics (a database is made with a team's first site), migrated first.
    const databases = new Set((await analytics.query<{ name: string }>("SELECT name FROM system.databases WHERE startsWith(name, 'tenant_')")).map((row) => row.name));
    const total: DailyBreakdownsCount = { counted: 0, moved: 0, forgotten: 0 };
    for (const team of teams) {
      if (stopped) return;
      if (!databases.has(analytics.tenantDatabase(team.id))) continue;
      const db = await analytics.ensureTenant(team.id);
      const counts = await countDailyBreakdowns(analytics, db, new Date(), () => stopped);
      total.counted += counts.counted;
      total.moved += counts.moved;
      total.forgotten += counts.forgotten;
    }
    if (total.counted + total.moved + total.forgotten > 0) runtime.log.info({ ...total, ms: Math.round(performance.now() - started) }, 'daily breakdowns counted');
  };
  const tick = () => {
    if (running) return;
    running = countAll()
      .catch((err: Error) => runtime.log.warn({ err: err.message }, 'counting daily breakdowns failed'))
      .finally(() => {
        running = null;
      });
  };
  return {
    start() {
      stopped = false;
      timer = setInterval(tick, RECOUNT_MS);
      tick();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
