// What AI crawlers and assistants fetched from a site over a range, from the rows the AI-fetch
// ingest route stored: totals, each assistant's activity, and the paths fetched most (the MCP
// server's get_ai_fetches tool reads this summary); and the reports of the dashboard's AI crawlers
// page: the summary broken down by family, category, resource type and status class, fetches over
// time by family, and the fetched paths beside the visits AI assistants referred to them.
import { Type } from '@sinclair/typebox';
import { validationFailed } from '../errors.ts';
import { DateTime, keyed, object } from '../openapi/responses.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { bucketKeyToMs, bucketStarts, chooseInterval } from './query/interval.ts';
import { parseRange, type TimeRange } from './range.ts';

/** At most this many assistants and paths are listed, most fetches first. */
const AI_FETCH_TOP = 20;

const count = (description: string) => Type.Integer({ minimum: 0, description });
const fetches = count('Fetches in the range');
const errors = count('Fetches answered with a status of 400 or more');

export const AiFetchSummary = object({
  range: object({ from: DateTime, to: DateTime, timezone: Type.String({ description: 'The site’s IANA time zone, in which days are counted' }) }),
  totals: object({ fetches, errors, pages: count('Distinct paths fetched'), bytes: count('Bytes served to the fetches'), assistants: count('Distinct assistants') }),
  assistants: Type.Array(
    object({
      assistant_name: Type.String({ description: 'The crawler or assistant, as its user agent names it (GPTBot, ClaudeBot, …)' }),
      assistant_family: Type.String({ description: 'Whose it is (OpenAI, Anthropic, …)' }),
      assistant_category: Type.String({ description: 'What it fetches for: training crawler, search indexer, assistant (on a user’s request), agent, or other' }),
      fetches,
      errors,
      pages: count('Distinct paths it fetched'),
      last_fetch_at: { ...DateTime, description: 'Its latest fetch in the range' },
    }),
  ),
  top_paths: Type.Array(object({ path: Type.String(), fetches, assistants: count('Distinct assistants that fetched it') })),
});

export interface AiFetchSummary {
  range: { from: string; to: string; timezone: string };
  totals: { fetches: number; errors: number; pages: number; bytes: number; assistants: number };
  assistants: { assistant_name: string; assistant_family: string; assistant_category: string; fetches: number; errors: number; pages: number; last_fetch_at: string }[];
  top_paths: { path: string; fetches: number; assistants: number }[];
}

const RANGE = `site_id = {site:UUID} AND ts >= {from:DateTime64(3)} AND ts < {to:DateTime64(3)}`;
const isoFromClickHouse = (text: string) => new Date(`${text.replace(' ', 'T')}Z`).toISOString();

/** The paths fetched most in the range (`params.top` of them), each with its distinct assistants. */
function topFetchedPaths(store: AnalyticsStore, params: { db: string; site: string; from: Date; to: Date; top: number }) {
  return store.query<{ path: string; fetches: string; assistants: string }>(
    `SELECT path, count() AS fetches, uniqExact(assistant_name) AS assistants
    FROM {db:Identifier}.ai_fetches
    WHERE ${RANGE}
    GROUP BY path
    ORDER BY fetches DESC, path
    LIMIT {top:UInt32}`,
    params,
  );
}

export async function aiFetchSummary(store: AnalyticsStore, site: { id: string; tenant: string }, range: TimeRange): Promise<AiFetchSummary> {
  const params = { db: site.tenant, site: site.id, from: range.from, to: range.to, top: AI_FETCH_TOP };
  type Counts = { fetches: string; errors: string; pages: string };
  const [totals, assistants, paths] = await Promise.all([
    store.query<Counts & { bytes: string; assistants: string }>(
      `SELECT count() AS fetches, countIf(status_code >= 400) AS errors, uniqExact(path) AS pages, sum(bytes) AS bytes, uniqExact(assistant_name) AS assistants
      FROM {db:Identifier}.ai_fetches
      WHERE ${RANGE}`,
      params,
    ),
    store.query<Counts & { assistant_name: string; assistant_family: string; assistant_category: string; last_fetch_at: string }>(
      `SELECT assistant_name, any(assistant_family) AS assistant_family, any(assistant_category) AS assistant_category,
             count() AS fetches, countIf(status_code >= 400) AS errors, uniqExact(path) AS pages, toString(max(ts)) AS last_fetch_at
      FROM {db:Identifier}.ai_fetches
      WHERE ${RANGE}
      GROUP BY assistant_name
      ORDER BY fetches DESC, assistant_name
      LIMIT {top:UInt32}`,
      params,
    ),
    topFetchedPaths(store, params),
  ]);
  const total = totals[0];
  return {
    range: { from: range.from.toISOString(), to: range.to.toISOString(), timezone: range.timezone },
    totals: {
      fetches: Number(total?.fetches ?? 0),
      errors: Number(total?.errors ?? 0),
      pages: Number(total?.pages ?? 0),
      bytes: Number(total?.bytes ?? 0),
      assistants: Number(total?.assistants ?? 0),
    },
    assistants: assistants.map((r) => ({
      assistant_name: r.assistant_name,
      assistant_family: r.assistant_family,
      assistant_category: r.assistant_category,
      fetches: Number(r.fetches),
      errors: Number(r.errors),
      pages: Number(r.pages),
      last_fetch_at: isoFromClickHouse(r.last_fetch_at),
    })),
    top_paths: paths.map((r) => ({ path: r.path, fetches: Number(r.fetches), assistants: Number(r.assistants) })),
  };
}


// ---- Reports of the dashboard's AI crawlers page ----

/** The longest range one report reads. */
export const AI_REPORT_MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;
/** A range of whole local days may be an hour longer than its days where a DST change falls in it. */
const DST_SLACK_MS = 3_600_000;
/** At most this many paths in each list of the pages report. */
const AI_PAGES_TOP = 100;

/** The range of a report request in the site's zone; a 400 when malformed or longer than AI_REPORT_MAX_RANGE_DAYS. */
export function parseReportRange(input: { from?: string; to?: string }, timezone: string, now = new Date()): TimeRange {
  const range = parseRange(input, timezone, now);
  if (range.to.getTime() - range.from.getTime() > AI_REPORT_MAX_RANGE_DAYS * DAY_MS + DST_SLACK_MS) {
    throw validationFailed([{ field: 'to', message: `to may be at most ${AI_REPORT_MAX_RANGE_DAYS} days after from`, type: 'rangeLength' }]);
  }
  return range;
}

/** What the summary's fetches are broken down by, each an expression over one ai_fetches row. */
const BREAKDOWNS = {
  assistant_family: 'assistant_family',
  assistant_category: 'assistant_category',
  resource_type: 'resource_type',
  // 2xx, 3xx, 4xx, 5xx: the class is what a crawler's owner acts on, not the exact code.
  status_class: "concat(toString(intDiv(status_code, 100)), 'xx')",
} as const;
type BreakdownKey = keyof typeof BREAKDOWNS;
const BREAKDOWN_KEYS = Object.keys(BREAKDOWNS) as BreakdownKey[];

const BreakdownRow = object({ value: Type.String(), fetches, assistants: count('Distinct assistants among them') });
export const AiFetchReport = object({
  ...AiFetchSummary.properties,
  breakdowns: keyed(BREAKDOWN_KEYS, Type.Array(BreakdownRow), {
    description: 'Fetches per assistant family, assistant category, resource type (page, image, …) and status class (2xx, 3xx, 4xx, 5xx), most first',
  }),
});
export type AiFetchReport = AiFetchSummary & { breakdowns: Record<BreakdownKey, { value: string; fetches: number; assistants: number }[]> };

/** The summary and its breakdowns (GET /api/sites/:id/ai-fetches/summary). */
export async function aiFetchReport(store: AnalyticsStore, site: { id: string; tenant: string }, range: TimeRange): Promise<AiFetchReport> {
  const params = { db: site.tenant, site: site.id, from: range.from, to: range.to };
  const [summary, ...lists] = await Promise.all([
    aiFetchSummary(store, site, range),
    ...BREAKDOWN_KEYS.map((key) =>
      store.query<{ value: string; fetches: string; assistants: string }>(
        `SELECT ${BREAKDOWNS[key]} AS value, count() AS fetches, uniqExact(assistant_name) AS assistants
        FROM {db:Identifier}.ai_fetches
        WHERE ${RANGE}
        GROUP BY value
        ORDER BY fetches DESC, value`,
        params,
      ),
    ),
  ]);
  const breakdowns = Object.fromEntries(
    BREAKDOWN_KEYS.map((key, i) => [key, lists[i].map((r) => ({ value: r.value, fetches: Number(r.fetches), assistants: Number(r.assistants) }))]),
  ) as AiFetchReport['breakdowns'];
  return { ...summary, breakdowns };
}

export const AI_REPORT_INTERVALS = ['hour', 'day'] as const;
export type AiReportInterval = (typeof AI_REPORT_INTERVALS)[number];

/** Bucket keys as lib/analytics/query/interval.ts reads them: epoch seconds of the local hour, or the local date. */
const FETCH_BUCKET: Readonly<Record<AiReportInterval, string>> = {
  hour: 'toUnixTimestamp(toStartOfHour(toTimeZone(ts, {tz:String})))',
  day: 'toDate(toTimeZone(ts, {tz:String}))',
};

export const AiFetchTimeseries = object({
  interval: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
  families: Type.Array(Type.String(), { description: 'The assistant families that fetched in the range, most fetches first' }),
  rows: Type.Array(
    object({
      bucket: { ...DateTime, description: 'Start of the local hour or day, as an RFC 3339 UTC instant' },
      fetches,
      families: Type.Array(object({ assistant_family: Type.String(), fetches }), { description: 'Every family of `families`, in its order, zero where it fetched nothing' }),
    }),
  ),
});
export interface AiFetchTimeseries {
  interval: AiReportInterval;
  families: string[];
  rows: { bucket: string; fetches: number; families: { assistant_family: string; fetches: number }[] }[];
}

/** Fetches per hour or day of the site's zone, by family, every bucket present (GET /api/sites/:id/ai-fetches/timeseries). */
export async function aiFetchTimeseries(
  store: AnalyticsStore,
  site: { id: string; tenant: string },
  range: TimeRange,
  interval: AiReportInterval = 'day',
): Promise<AiFetchTimeseries> {
  // Refuses an hourly series too long for a chart before any query runs.
  chooseInterval(range, interval);
  const starts = bucketStarts(range, interval);
  const rows = await store.query<{ key: string; assistant_family: string; fetches: string }>(
    `SELECT toString(${FETCH_BUCKET[interval]}) AS key, assistant_family, count() AS fetches
    FROM {db:Identifier}.ai_fetches
    WHERE ${RANGE}
    GROUP BY key, assistant_family`,
    { db: site.tenant, site: site.id, from: range.from, to: range.to, tz: range.timezone },
  );
  const totals = new Map<string, number>();
  const counted = new Map<string, number>();
  for (const row of rows) {
    const start = bucketKeyToMs(row.key, interval, range.timezone);
    totals.set(row.assistant_family, (totals.get(row.assistant_family) ?? 0) + Number(row.fetches));
    counted.set(`${start} ${row.assistant_family}`, Number(row.fetches));
  }
  const families = [...totals].sort(([a, x], [b, y]) => y - x || a.localeCompare(b)).map(([family]) => family);
  return {
    interval,
    families,
    rows: starts.map((start) => {
      const byFamily = families.map((family) => ({ assistant_family: family, fetches: counted.get(`${start.getTime()} ${family}`) ?? 0 }));
      return { bucket: start.toISOString(), fetches: byFamily.reduce((sum, f) => sum + f.fetches, 0), families: byFamily };
    }),
  };
}

const aiReferred = count('Visits referred by an AI assistant (channel ai) that landed on the path in the range');
export const AiFetchPages = object({
  range: AiFetchSummary.properties.range,
  fetched: Type.Array(object({ path: Type.String(), fetches, assistants: count('Distinct assistants that fetched it'), ai_referred_visits: aiReferred }), {
    description: `The paths AI agents fetched most (top ${AI_PAGES_TOP}), each with the AI-referred visits that entered the site on it`,
  }),
  unfetched_landings: Type.Array(object({ path: Type.String(), ai_referred_visits: aiReferred }), {
    description: `The entry pages of AI-referred visits that no AI agent fetched in the range, most visits first (top ${AI_PAGES_TOP})`,
  }),
});
export interface AiFetchPages {
  range: AiFetchSummary['range'];
  fetched: { path: string; fetches: number; assistants: number; ai_referred_visits: number }[];
  unfetched_landings: { path: string; ai_referred_visits: number }[];
}

/** Fetched paths against AI-referred landings, both ways (GET /api/sites/:id/ai-fetches/pages). */
export async function aiFetchPages(store: AnalyticsStore, site: { id: string; tenant: string }, range: TimeRange): Promise<AiFetchPages> {
  const params = { db: site.tenant, site: site.id, from: range.from, to: range.to, top: AI_PAGES_TOP };
  const fetched = await topFetchedPaths(store, params);
  // A visit's rows sum their sign to 1 (migration 0003); its entry page and channel never change.
  // The landings on the listed paths, and the top landings on paths no agent fetched, in one read.
  const landings = await store.query<{ entry_page: string; visits: string; listed: number }>(
    `SELECT entry_page, sum(sign) AS visits, has({paths:Array(String)}, entry_page) AS listed
    FROM {db:Identifier}.visits
    WHERE site_id = {site:UUID} AND start >= {from:DateTime64(3)} AND start < {to:DateTime64(3)} AND channel = 'ai'
      AND (has({paths:Array(String)}, entry_page)
        OR entry_page NOT IN (SELECT path FROM {db:Identifier}.ai_fetches WHERE ${RANGE}))
    GROUP BY entry_page
    HAVING visits > 0
    ORDER BY visits DESC, entry_page
    LIMIT {top:UInt32} BY listed`,
    { ...params, paths: fetched.map((r) => r.path) },
  );
  const landed = new Map(landings.filter((r) => Number(r.listed) === 1).map((r) => [r.entry_page, Number(r.visits)]));
  return {
    range: { from: range.from.toISOString(), to: range.to.toISOString(), timezone: range.timezone },
    fetched: fetched.map((r) => ({ path: r.path, fetches: Number(r.fetches), assistants: Number(r.assistants), ai_referred_visits: landed.get(r.path) ?? 0 })),
    unfetched_landings: landings.filter((r) => Number(r.listed) === 0).map((r) => ({ path: r.entry_page, ai_referred_visits: Number(r.visits) })),
  };
}
