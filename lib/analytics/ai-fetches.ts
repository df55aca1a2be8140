// What AI crawlers and assistants fetched from a site over a range, from the rows the AI-fetch
// ingest route stored: totals, each assistant's activity, and the paths fetched most. The MCP
// server's get_ai_fetches tool reads it; the schema below describes its answer.
import { Type } from '@sinclair/typebox';
import { DateTime, object } from '../openapi/responses.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { TimeRange } from './range.ts';

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
    store.query<{ path: string; fetches: string; assistants: string }>(
      `SELECT path, count() AS fetches, uniqExact(assistant_name) AS assistants
      FROM {db:Identifier}.ai_fetches
      WHERE ${RANGE}
      GROUP BY path
      ORDER BY fetches DESC, path
      LIMIT {top:UInt32}`,
      params,
    ),
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
