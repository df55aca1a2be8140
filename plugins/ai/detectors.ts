// The detectors: deterministic reads of a site's analytics that turn a range, compared with the
// range of the same length just before it, into candidate opportunities with the evidence rows
// they rest on. They alone decide what could be said; the provider only chooses and phrases.
import type { PluginHost } from '../../lib/plugins/api.ts';
import type { Candidate, DetectorKind, Evidence } from './contract.ts';

/** Days of the site's time zone, `to` included. */
export interface Days {
  from: string;
  to: string;
}

/** At most this many candidates per detector, the strongest first. */
const PER_DETECTOR = 3;
/** Below these counts a change is noise, not an opportunity. */
const MIN_PREVIOUS_VISITORS = 5;
const MIN_REFERRER_VISITS = 5;
const MIN_ENTRY_VISITS = 10;
const MIN_PREVIOUS_CONVERSIONS = 3;
const MIN_FETCHES = 3;

const DAY_MS = 86_400_000;
const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`);
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The range of the same number of days that ends the day before `days` starts. */
function previousDays(days: Days): Days {
  const length = dayOf(days.to) - dayOf(days.from) + DAY_MS;
  return { from: dateOf(dayOf(days.from) - length), to: dateOf(dayOf(days.from) - DAY_MS) };
}

type Found = { kind: DetectorKind; facts: Record<string, string | number>; evidence: Omit<Evidence, 'id'>[] };

const percentChange = (now: number, before: number) => Math.round(((now - before) / before) * 100);

/** Every detector over the site's range; candidates and evidence rows numbered in order (c1…, e1…). */
export async function detect(host: PluginHost, siteId: string, timezone: string, days: Days): Promise<Candidate[]> {
  const previous = previousDays(days);
  const params = { site: siteId, tz: timezone, from: days.from, to: days.to, prev_from: previous.from, top: PER_DETECTOR };
  const inDays = (column: string, from = '{prev_from:Date}') => `toDate(${column}, {tz:String}) BETWEEN ${from} AND {to:Date}`;
  const current = (column: string) => `toDate(${column}, {tz:String}) >= {from:Date}`;

  const losing = async (): Promise<Found[]> => {
    const rows = await host.analytics.query<{ path: string; visitors: string; previous_visitors: string }>(
      siteId,
      `SELECT path, uniqExactIf(visitor_id, ${current('ts')}) AS visitors, uniqExactIf(visitor_id, NOT ${current('ts')}) AS previous_visitors
         FROM {db:Identifier}.hits
        WHERE site_id = {site:UUID} AND ${inDays('ts')}
        GROUP BY path
       HAVING previous_visitors >= {min:UInt32} AND visitors * 10 <= previous_visitors * 7
        ORDER BY previous_visitors - visitors DESC, path
        LIMIT {top:UInt32}`,
      { ...params, min: MIN_PREVIOUS_VISITORS },
    );
    return rows.map((row) => {
      const visitors = Number(row.visitors);
      const before = Number(row.previous_visitors);
      return {
        kind: 'page_losing_traffic',
        facts: { path: row.path, visitors, previous_visitors: before, change_percent: percentChange(visitors, before) },
        evidence: [
          { metric: 'visitors', subject: row.path, period: 'current', value: visitors },
          { metric: 'visitors', subject: row.path, period: 'previous', value: before },
        ],
      };
    });
  };

  const rising = async (): Promise<Found[]> => {
    // A visit's rows sum their sign to 1: the collapsing visits table counts each visit once.
    const rows = await host.analytics.query<{ source: string; visits: string; previous_visits: string }>(
      siteId,
      `SELECT referrer_source AS source, sumIf(sign, ${current('start')}) AS visits, sumIf(sign, NOT ${current('start')}) AS previous_visits
         FROM {db:Identifier}.visits
        WHERE site_id = {site:UUID} AND ${inDays('start')} AND referrer_source != ''
        GROUP BY source
       HAVING visits >= {min:UInt32} AND previous_visits * 3 <= visits
        ORDER BY visits - previous_visits DESC, source
        LIMIT {top:UInt32}`,
      { ...params, min: MIN_REFERRER_VISITS },
    );
    return rows.map((row) => {
      const visits = Number(row.visits);
      const before = Number(row.previous_visits);
      return {
        kind: 'rising_referrer',
        facts: { source: row.source, visits, previous_visits: before },
        evidence: [
          { metric: 'visits', subject: row.source, period: 'current', value: visits },
          { metric: 'visits', subject: row.source, period: 'previous', value: before },
        ],
      };
    });
  };

  const exits = async (): Promise<Found[]> => {
    const rows = await host.analytics.query<{ path: string; visits: string; exits: string }>(
      siteId,
      `SELECT entry_page AS path, sum(sign) AS visits, sumIf(sign, visit_pageviews = 1) AS exits
         FROM {db:Identifier}.visits
        WHERE site_id = {site:UUID} AND ${inDays('start', '{from:Date}')}
        GROUP BY path
       HAVING visits >= {min:UInt32} AND exits * 10 >= visits * 7
        ORDER BY exits DESC, path
        LIMIT {top:UInt32}`,
      { ...params, min: MIN_ENTRY_VISITS },
    );
    return rows.map((row) => {
      const visits = Number(row.visits);
      const left = Number(row.exits);
      return {
        kind: 'high_exit_entry_page',
        facts: { path: row.path, visits, exit_percent: Math.round((left / visits) * 100) },
        evidence: [
          { metric: 'visits starting here', subject: row.path, period: 'current', value: visits },
          { metric: 'single-page visits', subject: row.path, period: 'current', value: left },
        ],
      };
    });
  };

  const goals = async (): Promise<Found[]> => {
    const [now, before] = await Promise.all([host.goalConversions(siteId, days), host.goalConversions(siteId, previous)]);
    const earlier = new Map(before.map((goal) => [goal.goal_id, goal]));
    return now
      .flatMap((goal) => {
        const then = earlier.get(goal.goal_id);
        if (!then || then.conversions < MIN_PREVIOUS_CONVERSIONS || goal.conversion_rate * 4 > then.conversion_rate * 3) return [];
        return [{ goal, then }];
      })
      .sort((a, b) => b.then.conversion_rate - b.goal.conversion_rate - (a.then.conversion_rate - a.goal.conversion_rate))
      .slice(0, PER_DETECTOR)
      .map(({ goal, then }) => ({
        kind: 'goal_conversion_fell' as const,
        facts: { goal: goal.name, rate: goal.conversion_rate, previous_rate: then.conversion_rate },
        evidence: [
          { metric: 'conversion rate (%)', subject: goal.name, period: 'current' as const, value: goal.conversion_rate },
          { metric: 'conversion rate (%)', subject: goal.name, period: 'previous' as const, value: then.conversion_rate },
          { metric: 'conversions', subject: goal.name, period: 'current' as const, value: goal.conversions },
          { metric: 'conversions', subject: goal.name, period: 'previous' as const, value: then.conversions },
        ],
      }));
  };

  const unreached = async (): Promise<Found[]> => {
    // Pages a visit from an AI assistant (channel ai) reached: every page of each of its states;
    // a superseded state lists a subset of the pages of the one that replaced it.
    const rows = await host.analytics.query<{ path: string; fetches: string; assistants: string }>(
      siteId,
      `SELECT path, count() AS fetches, uniqExact(assistant_name) AS assistants
         FROM {db:Identifier}.ai_fetches
        WHERE site_id = {site:UUID} AND ${inDays('ts', '{from:Date}')} AND status_code < 400 AND resource_type = 'html'
          AND path NOT IN (SELECT arrayJoin(pages) FROM {db:Identifier}.visits
                            WHERE site_id = {site:UUID} AND ${inDays('start', '{from:Date}')} AND channel = 'ai' AND sign = 1)
        GROUP BY path
       HAVING fetches >= {min:UInt32}
        ORDER BY fetches DESC, path
        LIMIT {top:UInt32}`,
      { ...params, min: MIN_FETCHES },
    );
    return rows.map((row) => {
      const fetches = Number(row.fetches);
      return {
        kind: 'ai_fetched_unreached',
        facts: { path: row.path, fetches, assistants: Number(row.assistants) },
        evidence: [
          { metric: 'AI crawler fetches', subject: row.path, period: 'current', value: fetches },
          { metric: 'AI-referred visits reaching it', subject: row.path, period: 'current', value: 0 },
        ],
      };
    });
  };

  const found = (await Promise.all([losing(), rising(), exits(), goals(), unreached()])).flat();
  let evidence = 0;
  return found.map((candidate, at) => ({
    id: `c${at + 1}`,
    kind: candidate.kind,
    facts: candidate.facts,
    evidence: candidate.evidence.map((row) => ({ id: `e${++evidence}`, ...row })),
  }));
}
