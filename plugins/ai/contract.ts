// The detector contract: what a detector hands the provider (candidates, each with the facts it
// found and the evidence rows behind them, every row with an id) and the only answer accepted back.
// The provider chooses which candidates to show, in which order, with which of the approved
// phrasings (translation keys), and which of the candidate's evidence to cite. Every param of a
// key is declared with its type, and its value must be the detector's own: the provider phrases,
// it never supplies a number or a path. Anything else rejects the whole answer before it is saved.

export type DetectorKind = 'page_losing_traffic' | 'rising_referrer' | 'high_exit_entry_page' | 'goal_conversion_fell' | 'ai_fetched_unreached';
export type ParamType = 'number' | 'string';

/** One row of evidence: a figure the detector read, over one of the two ranges. */
export interface Evidence {
  id: string;
  /** What was counted (visitors, visits, single-page visits, conversions, conversion rate, fetches, AI-referred visits). */
  metric: string;
  /** What it was counted for: a path, a referrer, a goal. */
  subject: string;
  period: 'current' | 'previous';
  value: number;
}

export interface Candidate {
  id: string;
  kind: DetectorKind;
  /** The values the keys of this kind interpolate, as the detector computed them. */
  facts: Record<string, string | number>;
  evidence: Evidence[];
}

interface Message {
  kind: DetectorKind;
  /** English, `{param}` interpolated as text (never markup). */
  text: string;
  params: Readonly<Record<string, ParamType>>;
}

/** The approved translation keys: each belongs to one detector kind and declares its params. */
export const MESSAGES: Readonly<Record<string, Message>> = {
  'ai.page_losing_traffic.review': {
    kind: 'page_losing_traffic',
    text: 'Visitors to {path} fell from {previous_visitors} to {visitors} ({change_percent}%): check what changed on the page and in the links to it.',
    params: { path: 'string', visitors: 'number', previous_visitors: 'number', change_percent: 'number' },
  },
  'ai.page_losing_traffic.short': { kind: 'page_losing_traffic', text: '{path} lost visitors: {change_percent}% against the previous period.', params: { path: 'string', change_percent: 'number' } },
  'ai.rising_referrer.engage': {
    kind: 'rising_referrer',
    text: '{source} sent {visits} visits, up from {previous_visits}: find where it links to you and keep that audience.',
    params: { source: 'string', visits: 'number', previous_visits: 'number' },
  },
  'ai.rising_referrer.short': { kind: 'rising_referrer', text: 'A new source is rising: {source} ({visits} visits).', params: { source: 'string', visits: 'number' } },
  'ai.high_exit_entry_page.improve': {
    kind: 'high_exit_entry_page',
    text: '{exit_percent}% of the {visits} visits that start on {path} leave without a second page: give it a clearer next step.',
    params: { path: 'string', visits: 'number', exit_percent: 'number' },
  },
  'ai.high_exit_entry_page.short': { kind: 'high_exit_entry_page', text: 'Most visits that land on {path} end there ({exit_percent}%).', params: { path: 'string', exit_percent: 'number' } },
  'ai.goal_conversion_fell.investigate': {
    kind: 'goal_conversion_fell',
    text: 'The conversion rate of the goal {goal} fell from {previous_rate}% to {rate}%: check the path to it for something broken or changed.',
    params: { goal: 'string', rate: 'number', previous_rate: 'number' },
  },
  'ai.goal_conversion_fell.short': { kind: 'goal_conversion_fell', text: 'Fewer visitors complete {goal}: {rate}% convert now.', params: { goal: 'string', rate: 'number' } },
  'ai.ai_fetched_unreached.answerable': {
    kind: 'ai_fetched_unreached',
    text: 'AI crawlers fetched {path} {fetches} times (distinct crawlers: {assistants}), yet no visitor from an AI assistant reached it: make it easier to cite and link to.',
    params: { path: 'string', fetches: 'number', assistants: 'number' },
  },
  'ai.ai_fetched_unreached.short': { kind: 'ai_fetched_unreached', text: 'AI crawlers read {path} ({fetches} fetches) but send no visitors to it.', params: { path: 'string', fetches: 'number' } },
};

/** The keys a candidate of `kind` may be phrased with. */
export const keysOf = (kind: DetectorKind) => Object.keys(MESSAGES).filter((key) => MESSAGES[key].kind === kind);

/** A key's text with its params written in, as plain text. */
export function renderMessage(key: string, params: Record<string, string | number>): string {
  const message = MESSAGES[key];
  if (!message) return key;
  return message.text.replace(/\{([a-z_]+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

/** An opportunity the provider chose, as it is saved. */
export interface ChosenOpportunity {
  candidate_id: string;
  kind: DetectorKind;
  key: string;
  params: Record<string, string | number>;
  evidence_ids: string[];
}

/** The JSON schema of the answer, given to the provider as its structured output (or its one tool's input). */
export function outputSchema(candidates: readonly Candidate[]) {
  const kinds = new Set(candidates.map((candidate) => candidate.kind));
  return {
    type: 'object',
    additionalProperties: false,
    required: ['opportunities'],
    properties: {
      opportunities: {
        type: 'array',
        maxItems: candidates.length,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['candidate_id', 'key', 'params', 'evidence_ids'],
          properties: {
            candidate_id: { type: 'string', enum: candidates.map((candidate) => candidate.id) },
            key: { type: 'string', enum: Object.keys(MESSAGES).filter((key) => kinds.has(MESSAGES[key].kind)) },
            params: { type: 'object', additionalProperties: { type: ['string', 'number'] } },
            evidence_ids: { type: 'array', minItems: 1, items: { type: 'string' } },
          },
        },
      },
    },
  } as const;
}

export class InvalidOutput extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidOutput';
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function exactKeys(value: Record<string, unknown>, keys: readonly string[], what: string) {
  const extra = Object.keys(value).find((key) => !keys.includes(key));
  if (extra !== undefined) throw new InvalidOutput(`${what} has a field that is not part of the contract`);
  const missing = keys.find((key) => !Object.hasOwn(value, key));
  if (missing !== undefined) throw new InvalidOutput(`${what} lacks ${missing}`);
}

/**
 * The provider's answer checked against the candidates it was given; throws InvalidOutput (whose
 * message names the rule, never the provider's text) for anything outside the contract.
 */
export function validateOutput(output: unknown, candidates: readonly Candidate[]): ChosenOpportunity[] {
  if (!isRecord(output)) throw new InvalidOutput('the answer is not an object');
  exactKeys(output, ['opportunities'], 'the answer');
  const items = output.opportunities;
  if (!Array.isArray(items)) throw new InvalidOutput('opportunities is not a list');
  if (items.length > candidates.length) throw new InvalidOutput('more opportunities than candidates');
  const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]));
  const seen = new Set<string>();
  return items.map((item, at) => {
    const what = `opportunity ${at + 1}`;
    if (!isRecord(item)) throw new InvalidOutput(`${what} is not an object`);
    exactKeys(item, ['candidate_id', 'key', 'params', 'evidence_ids'], what);
    const candidate = typeof item.candidate_id === 'string' ? byId.get(item.candidate_id) : undefined;
    if (!candidate) throw new InvalidOutput(`${what} names no candidate of the detectors`);
    if (seen.has(candidate.id)) throw new InvalidOutput(`${what} repeats a candidate`);
    seen.add(candidate.id);
    const message = typeof item.key === 'string' && Object.hasOwn(MESSAGES, item.key) ? MESSAGES[item.key] : undefined;
    if (!message) throw new InvalidOutput(`${what} uses a key that is not approved`);
    if (message.kind !== candidate.kind) throw new InvalidOutput(`${what} uses a key of another detector`);
    const params = item.params;
    if (!isRecord(params)) throw new InvalidOutput(`${what} has params that are not an object`);
    exactKeys(params, Object.keys(message.params), `the params of ${what}`);
    for (const [name, type] of Object.entries(message.params)) {
      const value = params[name];
      const typed = type === 'number' ? typeof value === 'number' && Number.isFinite(value) : typeof value === 'string';
      if (!typed) throw new InvalidOutput(`param ${name} of ${what} is not a ${type}`);
      if (value !== candidate.facts[name]) throw new InvalidOutput(`param ${name} of ${what} is not the detector's value`);
    }
    const cited = item.evidence_ids;
    if (!Array.isArray(cited) || cited.length === 0) throw new InvalidOutput(`${what} cites no evidence`);
    const own = new Set(candidate.evidence.map((row) => row.id));
    if (cited.some((id) => typeof id !== 'string' || !own.has(id))) throw new InvalidOutput(`${what} cites evidence its candidate does not have`);
    if (new Set(cited).size !== cited.length) throw new InvalidOutput(`${what} cites the same evidence twice`);
    return { candidate_id: candidate.id, kind: candidate.kind, key: item.key as string, params: params as Record<string, string | number>, evidence_ids: cited as string[] };
  });
}
