// Keeps daily_pages (migration 0005) counted: the leader, at once and then every ten minutes,
// fingerprints each closed UTC day of each tenant's sites, counts the days whose visits are not
// counted as they are now, and forgets the counts of days that changed or lost their visits.
// The stats read a day from the table only while its fingerprint still matches, so between a
// change and its recount the answers stay exact; they are only slower for that day.
import type { LeaderJob } from '../../cluster/leader-jobs.ts';
import type { Runtime } from '../runtime.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import {
  countDayStatement,
  countedDaysOfTenantStatement,
  dayFingerprintStatement,
  dayFingerprintsStatement,
  forgetCountsStatements,
} from './query/daily-pages.ts';

const RECOUNT_MS = 600_000;
/** A day is closed once its visits are in: the writer's last batches of the day land within seconds; this leaves minutes. */
const CLOSING_MS = 15 * 60_000;

export interface DailyPagesCount {
  /** Days counted now. */
  counted: number;
  /** Days whose visits changed while they were counted: counted at the next run. */
  moved: number;
  /** Counts forgotten: of days counted again, or whose visits are gone. */
  forgotten: number;
}

interface DayState {
  site_id: string;
  day: string;
  fingerprint: string;
}

/** The UTC midnight before which days are closed at `now`. */
export function closedBefore(now: Date): Date {
  const closing = new Date(now.getTime() - CLOSING_MS);
  return new Date(Date.UTC(closing.getUTCFullYear(), closing.getUTCMonth(), closing.getUTCDate()));
}

/**
 * Brings one tenant's daily_pages up to its visits of the days closed at `now`, newest day first
 * (the days dashboards read most). A day is listed as counted only if its fingerprint is the same
 * after its rows are written as before; otherwise its rows stay unlisted, so unread.
 */
export async function countDailyPages(store: AnalyticsStore, db: string, now = new Date()): Promise<DailyPagesCount> {
  const run = <T>(statement: { sql: string; params: Record<string, unknown> }) => store.query<T>(statement.sql, statement.params);
  const [current, counts] = await Promise.all([run<DayState>(dayFingerprintsStatement(db, closedBefore(now))), run<DayState>(countedDaysOfTenantStatement(db))]);
  const key = (s: DayState) => `${s.site_id} ${s.day}`;
  const countsOfDay = new Map<string, DayState[]>();
  for (const count of counts) countsOfDay.set(key(count), [...(countsOfDay.get(key(count)) ?? []), count]);
  const result: DailyPagesCount = { counted: 0, moved: 0, forgotten: 0 };
  const forget = async (day: DayState, stale: DayState[]) => {
    if (stale.length === 0) return;
    for (const statement of forgetCountsStatements(db, day.site_id, day.day, stale.map((s) => s.fingerprint))) await store.command(statement.sql, statement.params);
    result.forgotten += stale.length;
  };
  current.sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : 0));
  for (const day of current) {
    const known = countsOfDay.get(key(day)) ?? [];
    countsOfDay.delete(key(day));
    if (known.some((count) => count.fingerprint === day.fingerprint)) {
      await forget(
        day,
        known.filter((count) => count.fingerprint !== day.fingerprint),
      );
      continue;
    }
    const count = countDayStatement(db, day.site_id, day.day, day.fingerprint);
    await store.command(count.sql, count.params);
    const check = dayFingerprintStatement(db, day.site_id, day.day);
    const [after] = await store.query<{ fingerprint: string; imported: string | number }>(check.sql, check.params);
    // Rows of a state that did not last stay unlisted (a few, only where a day changed in the
    // instant it was counted); deleting them could race a new leader counting the same state.
    if (after?.fingerprint !== day.fingerprint || Number(after.imported) !== 0) {
      result.moved++;
      continue;
    }
    await store.insert('daily_pages_days', [{ site_id: day.site_id, day: day.day, fingerprint: day.fingerprint }], { database: db });
    result.counted++;
    await forget(day, known);
  }
  // Counted days that no longer have visits of their own (deleted, moved to another team, imported into).
  for (const stale of countsOfDay.values()) await forget(stale[0], stale);
  return result;
}

/** The leader's job: every tenant counted at once, then every ten minutes; a tick while a run is going is skipped. */
export function dailyPagesJob(runtime: Pick<Runtime, 'metadata' | 'analytics' | 'log'>): LeaderJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  const countAll = async () => {
    const started = performance.now();
    const { rows: teams } = await runtime.metadata().query<{ id: string }>('SELECT id FROM teams ORDER BY id');
    const total: DailyPagesCount = { counted: 0, moved: 0, forgotten: 0 };
    for (const team of teams) {
      if (stopped) return;
      const db = await runtime.analytics().ensureTenant(team.id);
      const counts = await countDailyPages(runtime.analytics(), db);
      total.counted += counts.counted;
      total.moved += counts.moved;
      total.forgotten += counts.forgotten;
    }
    if (total.counted + total.moved + total.forgotten > 0) runtime.log.info({ ...total, ms: Math.round(performance.now() - started) }, 'daily pages counted');
  };
  const tick = () => {
    if (running) return;
    running = countAll()
      .catch((err: Error) => runtime.log.warn({ err: err.message }, 'counting daily pages failed'))
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
