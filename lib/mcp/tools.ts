// The MCP server's tools as an assistant sees them: what each returns (units, date forms,
// defaults), the arguments it takes (zod, checked by the SDK before the call) and the shape of its
// answer. An answer's schema is the REST route's own published schema (TypeBox, turned into zod),
// so a tool cannot describe its figures differently from the API. services/mcp.service.ts runs them.
import type { TSchema } from '@sinclair/typebox';
import { z } from 'zod';
import { AiFetchSummary } from '../analytics/ai-fetches.ts';
import { BRAND } from '../brand.ts';
import { DIMENSION_KEYS } from '../analytics/events/filters.ts';
import * as E from '../analytics/events/responses.ts';
import { FILTER_DIMENSIONS, FILTER_OPERATORS, MAX_FILTERS, MAX_VALUE_LENGTH } from '../analytics/query/filters.ts';
import { INTERVALS } from '../analytics/query/interval.ts';
import { BREAKDOWN_DIMENSIONS } from '../analytics/query/plan.ts';
import * as S from '../analytics/query/responses.ts';
import * as F from '../funnels/responses.ts';
import * as G from '../goals/responses.ts';
import { object } from '../openapi/responses.ts';
import { plain } from '../openapi/operation.ts';
import { DEFAULT_PAGE_SIZE, MAX_OFFSET, MAX_PAGE_SIZE } from '../pagination.ts';
import * as Sites from '../sites/responses.ts';
import { MCP_MAX_RANGE_DAYS } from './site-access.ts';

export interface ToolSpec {
  title: string;
  description: string;
  input: z.ZodRawShape;
  output: TSchema;
  /** The one line put before the answer's JSON in the text content. */
  summary(answer: Record<string, unknown>): string;
}

const RANGE_HELP = `Dates are YYYY-MM-DD (whole days in the site's time zone, \`to\` included) or RFC 3339 instants; without them the range is the last 30 days including today. At most ${MCP_MAX_RANGE_DAYS} days per call.`;
const FIGURES_HELP =
  'Visitors are unique visitors (counted without cookies, per day), visits are sessions, bounce_rate is a percentage (0–100) of visits with one pageview and no engagement, visit_duration is mean seconds per visit.';

const siteId = { site_id: z.uuid().describe('The site’s id, as list_sites gives it') };
const range = {
  ...siteId,
  from: z.string().max(64).optional().describe('Start: YYYY-MM-DD (local day) or an RFC 3339 instant; default 29 days before today'),
  to: z.string().max(64).optional().describe('End: YYYY-MM-DD (local day, included) or an RFC 3339 instant (excluded); default today'),
};
const filters = {
  filters: z
    .array(
      z.object({
        dimension: z.enum(FILTER_DIMENSIONS).describe('What the filter looks at (page is the path, source the referrer source such as Google, country an ISO 3166 alpha-2 code)'),
        operator: z.enum(FILTER_OPERATORS).describe('is / is_not: exact match (several values separated by |); contains: substring; matches: wildcard pattern with *'),
        value: z.string().min(1).max(MAX_VALUE_LENGTH),
      }),
    )
    .max(MAX_FILTERS)
    .optional()
    .describe('Filters, all of which must hold (AND)'),
};
const compare = {
  compare: z.enum(['previous_period', 'year']).optional().describe('Also return the figures of the period just before (previous_period) or of the same range a year earlier (year)'),
};
const interval = { interval: z.enum(INTERVALS).optional().describe('Bucket size; default: hour up to 2 days, day up to 62 days, week up to 26 weeks, else month') };
const paging = {
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE).describe(`Rows per page (default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE})`),
  offset: z.number().int().min(0).max(MAX_OFFSET).default(0).describe('Rows to skip (for the next page)'),
};
const eventName = { event_name: z.string().min(1).max(500).describe('The custom event, as list_event_names gives it') };
const eventFilters = {
  property_key: z.string().min(1).max(500).optional().describe('Count only events whose property has property_value (give both)'),
  property_value: z.string().max(2000).optional(),
  dimension_key: z.enum(DIMENSION_KEYS).optional().describe('Count only events whose page path, visit source, device or country is dimension_value (give both)'),
  dimension_value: z.string().max(2000).optional(),
};

const rows = (answer: Record<string, unknown>) => (Array.isArray(answer.rows) ? answer.rows.length : 0);
const span = (answer: Record<string, unknown>) => {
  const r = answer.range as { from: string; to: string; timezone: string } | undefined;
  return r ? ` from ${r.from} to ${r.to} (${r.timezone})` : '';
};

export const TOOLS = {
  list_sites: {
    title: 'List sites',
    description: 'The sites this token can read: id, domain, time zone and the token’s role on each. Call it first to find the site_id the other tools need.',
    input: paging,
    output: Sites.SitePage,
    summary: (a) => `${a.total} site(s) readable with this token.`,
  },
  get_kpis: {
    title: 'Key figures',
    description: `Visitors, visits, pageviews, views per visit, bounce rate, visit duration and engagement time of a site over a range, optionally with the same figures for a comparison period. ${FIGURES_HELP} ${RANGE_HELP}`,
    input: { ...range, ...filters, ...compare },
    output: S.KpisOnly,
    summary: (a) => {
      const k = a.kpis as { visitors: number; visits: number; pageviews: number };
      return `${k.visitors} visitors, ${k.visits} visits, ${k.pageviews} pageviews${span(a)}.`;
    },
  },
  get_timeseries: {
    title: 'Traffic over time',
    description: `Visitors, visits and pageviews per hour, day, week or month of a range; every bucket is listed, empty ones as zeros. A bucket's start is a UTC instant at a local boundary of the site's time zone. ${RANGE_HELP}`,
    input: { ...range, ...filters, ...interval },
    output: S.Timeseries,
    summary: (a) => `${Array.isArray(a.timeseries) ? a.timeseries.length : 0} buckets${span(a)}.`,
  },
  get_breakdown: {
    title: 'Top values of a dimension',
    description: `Visitors, visits, pageviews, bounce rate and visit duration per value of one dimension (top pages, entry or exit pages, sources, referrers, channels, UTM tags, countries, regions, browsers, operating systems, devices, hostnames, AI assistants that sent visitors), most visitors first, one page of rows at a time; with compare, each row also has its visitors in the comparison period. ${FIGURES_HELP} ${RANGE_HELP}`,
    input: { ...range, dimension: z.enum(BREAKDOWN_DIMENSIONS).describe('What to group by'), ...filters, ...compare, ...paging },
    output: S.Breakdown,
    summary: (a) => `${rows(a)} of ${a.total} values of ${a.dimension}.`,
  },
  list_event_names: {
    title: 'Custom events',
    description: `The custom events a site recorded in a range, each with the distinct sessions that sent it and its count, most sessions first. ${RANGE_HELP}`,
    input: range,
    output: E.EventNames,
    summary: (a) => `${rows(a)} event name(s).`,
  },
  get_event_properties: {
    title: 'Properties of an event',
    description: `The property keys sent with a custom event in a range, with the distinct sessions that sent each. ${RANGE_HELP}`,
    input: { ...range, ...eventName },
    output: E.EventProperties,
    summary: (a) => `${rows(a)} property key(s).`,
  },
  get_event_breakdown: {
    title: 'Values of an event property',
    description: `One row per value of a property of a custom event (distinct sessions and events), most sessions first, at most 1000. ${RANGE_HELP}`,
    input: { ...range, ...eventName, property_key: z.string().min(1).max(500).describe('The property whose values to count, as get_event_properties gives it') },
    output: E.EventBreakdown,
    summary: (a) => `${rows(a)} value(s).`,
  },
  get_event_timeseries: {
    title: 'A custom event over time',
    description: `Distinct sessions and events of a custom event per bucket (hour up to 2 days, else day, unless interval says), every bucket listed, optionally only events with a property value or from a page, source, device or country. ${RANGE_HELP}`,
    input: { ...range, ...eventName, ...eventFilters, ...interval },
    output: E.EventTimeseries,
    summary: (a) => `${rows(a)} buckets by ${a.interval}.`,
  },
  get_event_audience: {
    title: 'Who sent an event',
    description: `The top 10 pages, visit sources, devices and countries by distinct sessions that sent a custom event. ${RANGE_HELP}`,
    input: { ...range, ...eventName, ...eventFilters },
    output: E.EventAudience,
    summary: () => 'Top pages, sources, devices and countries.',
  },
  list_goals: {
    title: 'Goals and their conversions',
    description: `Every goal of a site with its conversions in a range: unique converting visitors, matching pageviews or events, conversion rate as a percentage (one decimal) of the range's visitors, and revenue where the goal has one. ${RANGE_HELP}`,
    input: range,
    output: G.GoalStats,
    summary: (a) => `${rows(a)} goal(s).`,
  },
  list_funnels: {
    title: 'Funnels',
    description: 'The funnels of a site (id, name, ordered steps, conversion window in seconds), oldest first. get_funnel gives a funnel’s step conversions.',
    input: { ...siteId, ...paging },
    output: F.FunnelPage,
    summary: (a) => `${a.total} funnel(s).`,
  },
  get_funnel: {
    title: 'A funnel’s conversions',
    description: `A funnel and, for a range, the visitors who reached each step in order within its window, with drop-off and conversion rates (percentages). ${RANGE_HELP}`,
    input: { ...range, funnel_id: z.uuid().describe('The funnel’s id, as list_funnels gives it') },
    output: object({ funnel: F.Funnel, stats: F.FunnelStats }),
    summary: (a) => `Funnel ${(a.funnel as { name: string }).name}.`,
  },
  get_realtime: {
    title: 'Right now',
    description: 'Who is on the site now: visitors seen in the last five minutes, the pages they are on, the sources of their visits (empty for direct), and the latest custom events of the last day.',
    input: siteId,
    output: E.RealtimeSnapshot,
    summary: (a) => `${a.live_visitors} live visitor(s) at ${a.at}.`,
  },
  get_ai_fetches: {
    title: 'AI crawler activity',
    description: `What AI crawlers and assistants (GPTBot, ClaudeBot, PerplexityBot, …) fetched from the site in a range, from the crawler logs forwarded to ${BRAND}: totals, each assistant's fetches, error answers, distinct pages and latest fetch, and the most fetched paths (top 20). Bytes are the response sizes logged. ${RANGE_HELP}`,
    input: range,
    output: AiFetchSummary,
    summary: (a) => `${(a.totals as { fetches: number }).fetches} AI fetch(es)${span(a)}.`,
  },
} satisfies Record<string, ToolSpec>;

export type ToolName = keyof typeof TOOLS;

/** The zod form of a tool's answer schema, made once per node. */
const outputs = new Map<ToolName, z.ZodType>();
export function outputSchemaOf(name: ToolName): z.ZodType {
  let schema = outputs.get(name);
  if (!schema) {
    schema = z.fromJSONSchema(plain(TOOLS[name].output) as Parameters<typeof z.fromJSONSchema>[0]);
    outputs.set(name, schema);
  }
  return schema;
}
