// Per-visit breakdowns asked for while the analytics store is busy run together. A dashboard asks
// for its panels all at once, beside its KPIs: the per-visit panels (sources, campaigns, countries,
// devices, …) of one scope that arrive while another stats query runs wait for it to finish, then
// go as one GROUPING SETS query, which costs about what two of them cost alone (the store runs at
// most one read per core, so the four would queue anyway). Like a group commit, nothing waits when
// the store is idle, and what arrives during a batch waits only for that batch. Answers are the
// same as run one by one (tested).
import { type AnalyticsStore, AnalyticsStoreError } from '../../stores/analytics/index.ts';
import { type CountedDay, countsStatement, dailySetsStatement, dayFingerprintsStatement, matchCounts, readsDailyBreakdowns, wholeClosedDays } from './daily-breakdowns.ts';
import { breakdownSetsStatement, type Scope, type Statement, type VisitSource } from './sql.ts';

export type Row = Record<string, unknown>;

interface Waiting {
  scope: Scope;
  columns: Map<VisitSource['column'], { source: VisitSource; callers: { resolve(rows: Row[]): void; reject(err: unknown): void }[] }>;
}

export class StatsQueries {
  private readonly store: AnalyticsStore;
  private inFlight = 0;
  private readonly waiting = new Map<string, Waiting>();
  /** Counted days being looked up, by scope: the breakdowns of one dashboard load share one look-up. */
  private readonly counting = new Map<string, Promise<CountedDay[]>>();

  constructor(store: AnalyticsStore) {
    this.store = store;
  }

  /** Runs one statement, counted as in flight so breakdowns arriving meanwhile are batched. */
  async run(statement: Statement): Promise<Row[]> {
    this.inFlight++;
    try {
      return await this.store.query<Row>(statement.sql, statement.params);
    } finally {
      this.inFlight--;
      this.flush();
    }
  }

  /**
   * Every row (value with visits) of a per-visit breakdown of `scope`, unordered, or null when the
   * store is idle: then the caller runs its own paged statement at once.
   */
  visitBreakdownRows(scope: Scope, source: VisitSource): Promise<Row[]> | null {
    if (this.inFlight === 0) return null;
    const key = JSON.stringify([scope.db, scope.site, scope.from, scope.to, scope.filters]);
    let waiting = this.waiting.get(key);
    if (!waiting) {
      waiting = { scope, columns: new Map() };
      this.waiting.set(key, waiting);
    }
    let column = waiting.columns.get(source.column);
    if (!column) {
      column = { source, callers: [] };
      waiting.columns.set(source.column, column);
    }
    const callers = column.callers;
    return new Promise((resolve, reject) => callers.push({ resolve, reject }));
  }

  /**
   * The days of an unfiltered scope that daily_breakdowns holds as its visits are now (see
   * daily-breakdowns.ts): the fingerprints of the scope's whole closed UTC days, matched with the
   * days' listed counts. Requests for the same scope while one look-up runs share it.
   */
  countedDays(scope: Scope, now = new Date()): Promise<CountedDay[]> {
    const days = readsDailyBreakdowns(scope) ? wholeClosedDays(scope, now) : null;
    if (!days) return Promise.resolve([]);
    const key = JSON.stringify([scope.db, scope.site, days]);
    let lookUp = this.counting.get(key);
    if (!lookUp) {
      const counts = this.run(countsStatement(scope.db, { site: scope.site, ...days })).catch((err: unknown) => {
        // A tenant the node has not migrated since an upgrade yet has no counts: it is read from its visits.
        if (err instanceof AnalyticsStoreError && err.type === 'UNKNOWN_TABLE') return [];
        throw err;
      });
      lookUp = Promise.all([this.run(dayFingerprintsStatement(scope.db, days, scope.site)), counts])
        .then(([current, counts]) => matchCounts(current as { day: string; fingerprint: string }[], counts as { day: string; fingerprint: string; count_id: string }[]))
        .finally(() => this.counting.delete(key));
      this.counting.set(key, lookUp);
    }
    return lookUp;
  }

  /** Breakdown requests waiting for the store (for observation and tests). */
  waitingRequests(): number {
    let n = 0;
    for (const waiting of this.waiting.values()) for (const column of waiting.columns.values()) n += column.callers.length;
    return n;
  }

  private flush(): void {
    if (this.waiting.size === 0) return;
    const batches = [...this.waiting.values()];
    this.waiting.clear();
    for (const batch of batches) {
      const columns = [...batch.columns.values()];
      this.setsRows(
        batch.scope,
        columns.map((c) => c.source),
      ).then(
        (rows) => {
          for (const [index, column] of columns.entries()) {
            const mine = rows.filter((row) => Number(row.set_index) === index);
            for (const caller of column.callers) caller.resolve(mine);
          }
        },
        (err: unknown) => {
          for (const column of columns) for (const caller of column.callers) caller.reject(err);
        },
      );
    }
  }

  /** breakdownSetsStatement's rows, the counted days summed from daily_breakdowns. */
  private async setsRows(scope: Scope, sources: VisitSource[]): Promise<Row[]> {
    const counted = await this.countedDays(scope);
    return this.run(counted.length > 0 ? dailySetsStatement(scope, sources, counted) : breakdownSetsStatement(scope, sources));
  }
}

const byStore = new WeakMap<AnalyticsStore, StatsQueries>();

/** The stats queries of a store (one per store, so every stats request shares its batching). */
export function statsQueries(store: AnalyticsStore): StatsQueries {
  let queries = byStore.get(store);
  if (!queries) {
    queries = new StatsQueries(store);
    byStore.set(store, queries);
  }
  return queries;
}
