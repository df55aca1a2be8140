// The detector contract on its own: what the provider may answer about the candidates it was
// given, rule by rule, and how an accepted key is written as text; and the settings the plugin
// refuses to start without.
import { describe, expect, it } from '@jest/globals';
import type { ServiceBroker } from 'moleculer';
import type { LeaderJobs } from '../../cluster/leader-jobs.ts';
import { silentLog } from '../../lib/log.ts';
import { registerPlugins } from '../../lib/plugins/register.ts';
import type { Runtime } from '../../lib/runtime.ts';
import { type Candidate, InvalidOutput, keysOf, renderMessage, validateOutput } from './contract.ts';
import ai from './index.ts';

const candidates: Candidate[] = [
  {
    id: 'c1',
    kind: 'high_exit_entry_page',
    facts: { path: '/landing', visits: 10, exit_percent: 80 },
    evidence: [
      { id: 'e1', metric: 'visits starting here', subject: '/landing', period: 'current', value: 10 },
      { id: 'e2', metric: 'single-page visits', subject: '/landing', period: 'current', value: 8 },
    ],
  },
  {
    id: 'c2',
    kind: 'rising_referrer',
    facts: { source: 'news.example', visits: 6, previous_visits: 0 },
    evidence: [{ id: 'e3', metric: 'visits', subject: 'news.example', period: 'current', value: 6 }],
  },
];
const landing = { candidate_id: 'c1', key: 'ai.high_exit_entry_page.short', params: { path: '/landing', exit_percent: 80 }, evidence_ids: ['e2'] };
const rejects = (output: unknown, rule: string) => {
  expect(() => validateOutput(output, candidates)).toThrow(InvalidOutput);
  expect(() => validateOutput(output, candidates)).toThrow(rule);
};

describe('validateOutput', () => {
  it('accepts a choice of candidates, in the provider’s order, with their own keys, params and evidence', () => {
    const referrer = { candidate_id: 'c2', key: 'ai.rising_referrer.short', params: { source: 'news.example', visits: 6 }, evidence_ids: ['e3'] };
    expect(validateOutput({ opportunities: [referrer, landing] }, candidates)).toEqual([
      { ...referrer, kind: 'rising_referrer' },
      { ...landing, kind: 'high_exit_entry_page' },
    ]);
    expect(validateOutput({ opportunities: [] }, candidates)).toEqual([]);
  });

  it('rejects a candidate named twice or not given, and a key of another detector', () => {
    rejects({ opportunities: [landing, landing] }, 'repeats a candidate');
    rejects({ opportunities: [{ ...landing, candidate_id: 'c9' }] }, 'names no candidate');
    rejects({ opportunities: [{ ...landing, key: 'ai.rising_referrer.short' }] }, 'uses a key of another detector');
    rejects({ opportunities: [{ ...landing, key: 'toString' }] }, 'uses a key that is not approved');
  });

  it('rejects a missing or extra param, a param of the wrong type, and a value the detector did not compute', () => {
    rejects({ opportunities: [{ ...landing, params: { path: '/landing' } }] }, 'lacks exit_percent');
    rejects({ opportunities: [{ ...landing, params: { ...landing.params, note: 'x' } }] }, 'has a field that is not part of the contract');
    rejects({ opportunities: [{ ...landing, params: { path: '/landing', exit_percent: '80' } }] }, 'param exit_percent of opportunity 1 is not a number');
    rejects({ opportunities: [{ ...landing, params: { path: '/landing', exit_percent: Number.NaN } }] }, 'is not a number');
    rejects({ opportunities: [{ ...landing, params: { path: '/elsewhere', exit_percent: 80 } }] }, 'param path of opportunity 1 is not the detector');
  });

  it('rejects no evidence, evidence twice, and evidence of another candidate', () => {
    rejects({ opportunities: [{ ...landing, evidence_ids: [] }] }, 'cites no evidence');
    rejects({ opportunities: [{ ...landing, evidence_ids: ['e1', 'e1'] }] }, 'cites the same evidence twice');
    rejects({ opportunities: [{ ...landing, evidence_ids: ['e3'] }] }, 'cites evidence its candidate does not have');
  });

  it('rejects anything but the one documented shape', () => {
    rejects(null, 'the answer is not an object');
    rejects([landing], 'the answer is not an object');
    rejects({ opportunities: [landing], summary: 'x' }, 'the answer has a field that is not part of the contract');
    rejects({ opportunities: [landing, landing, landing] }, 'more opportunities than candidates');
    rejects({ opportunities: 'all of them' }, 'opportunities is not a list');
  });
});

describe('renderMessage', () => {
  it('writes the params into the key’s English text as they are, markup included as text', () => {
    expect(renderMessage('ai.high_exit_entry_page.short', { path: '/<b>x</b>', exit_percent: 80 })).toBe('Most visits that land on /<b>x</b> end there (80%).');
  });

  it('offers every detector kind at least one key', () => {
    for (const kind of ['page_losing_traffic', 'rising_referrer', 'high_exit_entry_page', 'goal_conversion_fell', 'ai_fetched_unreached'] as const) expect(keysOf(kind).length).toBeGreaterThan(0);
  });
});

describe('the ai plugin’s start', () => {
  const start = (settings: Record<string, unknown>) => {
    const broker = { createService: () => undefined, broadcast: async () => undefined } as unknown as ServiceBroker;
    const runtime = { log: silentLog, metadata: () => ({}), sites: {}, whenStoresReady: async () => undefined } as unknown as Runtime;
    const jobs = { register: () => async () => undefined } as unknown as LeaderJobs;
    const defaults = { enabled: false, provider: 'openai-compatible', allow_private_base_url: false, requests_per_minute: 10, tokens_per_day: 1000, timeout_seconds: 30 };
    return () => registerPlugins(broker, runtime, jobs, [{ definition: ai, specifier: 'ai' }], new Map([['ai', { ...defaults, ...settings }]]));
  };

  it('refuses to start enabled without a model, or with Anthropic without a key', () => {
    expect(start({ enabled: true })).toThrow('plugin ai failed to start: its services() threw: PLUMB_AI_MODEL is required when PLUMB_AI_ENABLED is true');
    expect(start({ enabled: true, model: 'm', provider: 'anthropic' })).toThrow('PLUMB_AI_API_KEY is required for the anthropic provider');
  });

  it('starts off, or enabled with a model', () => {
    expect(start({})).not.toThrow();
    expect(start({ enabled: true, model: 'm' })).not.toThrow();
  });
});
