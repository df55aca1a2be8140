// The AI plugin (`-plugins ai`, and PLUMB_AI_ENABLED=true to use it): opportunities for a site.
// Deterministic detectors read the site's analytics and find candidates with evidence (a page
// losing visitors, a new referrer rising, an entry page most visits leave at once, a goal
// converting less, pages AI crawlers read that no AI-referred visitor reaches); a provider
// (OpenAI-compatible or Anthropic) only chooses among them and picks approved phrasings, and its
// answer is validated against the detector contract before anything is saved. Written against
// the plugin API; provider calls go through the host's guarded client.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { action, conflict, DateTime, definePlugin, notFound, nullable, object, PLUGIN_API_VERSION, stringEnum, Type, Uuid, validationFailed } from '../../lib/plugins/api.ts';
import { type Evidence, renderMessage } from './contract.ts';
import { createLimiter } from './limiter.ts';
import type { ProviderName, ProviderSettings } from './providers.ts';
import { createRunQueue, FEATURE } from './runs.ts';

const STATUSES = ['new', 'saved', 'done', 'dismissed'] as const;
type OpportunityStatus = (typeof STATUSES)[number];
const RUN_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
/** The longest range a run reads (and compares with the range before it). */
const MAX_RANGE_DAYS = 366;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DEFAULT_BASE_URLS: Record<ProviderName, string> = { 'openai-compatible': 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com' };

const EvidenceRow = object({
  id: Type.String(),
  metric: Type.String(),
  subject: Type.String(),
  period: stringEnum(['current', 'previous']),
  value: Type.Number(),
});
const Opportunity = object({
  id: Uuid,
  kind: Type.String({ description: 'The detector that found it' }),
  key: Type.String({ description: 'The approved translation key the text is written from' }),
  params: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), { description: 'The key’s interpolation params' }),
  text: Type.String({ description: 'The key with its params, in English, as plain text' }),
  evidence: Type.Array(EvidenceRow, { description: 'The detector’s evidence rows the provider cited' }),
  status: stringEnum(STATUSES),
  run_id: Uuid,
  created_at: DateTime,
});
const RUN_FIELDS = {
  id: Uuid,
  site_id: Uuid,
  feature: Type.String(),
  provider: Type.String(),
  model: Type.String(),
  range_from: Type.String(),
  range_to: Type.String(),
  status: stringEnum(RUN_STATUSES),
  error_category: nullable(Type.String({ description: 'Why it failed: invalid_output, provider_timeout, provider_error, rate_limited, budget_exceeded, …' })),
  input_sha256: nullable(Type.String()),
  output_sha256: nullable(Type.String()),
  requests: Type.Integer(),
  input_tokens: nullable(Type.Integer()),
  output_tokens: nullable(Type.Integer()),
  candidates: nullable(Type.Integer()),
  opportunities: nullable(Type.Integer()),
  events: Type.Array(object({ event: Type.String(), at: DateTime })),
  created_at: DateTime,
  finished_at: nullable(DateTime),
};
const Run = object(RUN_FIELDS);
/** A run as instance administrators see it, across sites: which site it was for. */
const AdminRun = object({ ...RUN_FIELDS, site_domain: nullable(Type.String({ description: 'The site’s domain; null once the site is deleted' })) });
const Usage = object({
  requests_last_minute: Type.Integer(),
  requests_per_minute: Type.Integer(),
  tokens_today: Type.Integer(),
  tokens_per_day: Type.Integer(),
});
const Settings = object({
  enabled: Type.Boolean(),
  provider: Type.String(),
  model: nullable(Type.String()),
  base_url: Type.String(),
  api_key_set: Type.Boolean({ description: 'Whether an API key is configured; the key itself is never shown' }),
  allow_private_base_url: Type.Boolean(),
  requests_per_minute: Type.Integer(),
  tokens_per_day: Type.Integer(),
  timeout_seconds: Type.Integer(),
  rows: Type.Array(object({ setting: Type.String(), value: Type.String() }), { description: 'The same settings as rows to read, for the admin page' }),
});

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const RUN_COLUMNS = `id, site_id, feature, provider, model, to_char(range_from, 'YYYY-MM-DD') AS range_from, to_char(range_to, 'YYYY-MM-DD') AS range_to,
  status, error_category, input_sha256, output_sha256, requests, input_tokens, output_tokens, candidates, opportunities,
  COALESCE((SELECT json_agg(json_build_object('event', e.event, 'at', ${iso('e.at')}) ORDER BY e.id) FROM run_events e WHERE e.run_id = runs.id), '[]'::json) AS events,
  ${iso('created_at')} AS created_at, ${iso('finished_at')} AS finished_at`;
const OPPORTUNITY_COLUMNS = `id, kind, message_key, params, evidence, status, run_id, ${iso('created_at')} AS created_at`;

interface OpportunityRow {
  id: string;
  kind: string;
  message_key: string;
  params: Record<string, string | number>;
  evidence: Evidence[];
  status: OpportunityStatus;
  run_id: string;
  created_at: string;
}
const opportunityOf = ({ message_key: key, ...row }: OpportunityRow) => ({ ...row, key, text: renderMessage(key, row.params) });

/** The days of a request, checked: both dates, in order, not too far apart. */
function checkDays(from: string, to: string) {
  const valid = (date: string) => DATE.test(date) && !Number.isNaN(Date.parse(`${date}T00:00:00Z`)) && new Date(`${date}T00:00:00Z`).toISOString().startsWith(date);
  const problems = [
    ...(valid(from) ? [] : [{ field: 'from', message: 'from must be a date, YYYY-MM-DD', type: 'date' }]),
    ...(valid(to) ? [] : [{ field: 'to', message: 'to must be a date, YYYY-MM-DD', type: 'date' }]),
  ];
  if (problems.length === 0) {
    const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
    if (days < 1) problems.push({ field: 'to', message: 'to must not be before from', type: 'rangeOrder' });
    else if (days > MAX_RANGE_DAYS) problems.push({ field: 'to', message: `to may be at most ${MAX_RANGE_DAYS} days after from`, type: 'rangeLength' });
  }
  if (problems.length > 0) throw validationFailed(problems);
}

export default definePlugin({
  name: 'ai',
  version: '1.0.0',
  apiVersion: PLUGIN_API_VERSION,
  description: 'Opportunities for a site: analytics detectors find them, an AI provider chooses and phrases them within a checked contract',
  settings: {
    enabled: { type: 'bool', default: false, description: 'Turn the AI features on (they also need a model).' },
    provider: { type: 'enum', values: ['openai-compatible', 'anthropic'], default: 'openai-compatible', description: 'The provider API: an OpenAI-compatible chat-completions endpoint, or Anthropic.' },
    model: { type: 'string', maxLength: 200, description: 'The model to ask (required when enabled).' },
    base_url: { type: 'url', schemes: ['https:', 'http:'], description: 'The provider’s or gateway’s base URL (unset: OpenAI’s or Anthropic’s own).' },
    api_key: { type: 'string', secret: true, description: 'The provider API key (required for anthropic).' },
    allow_private_base_url: {
      type: 'bool',
      default: false,
      description: 'Let the base URL be a loopback or private address (a model server on your network, tests); it removes the outbound address protection for provider calls.',
    },
    requests_per_minute: { type: 'int', default: 10, min: 1, max: 10_000, description: 'Provider requests per minute, for this process.' },
    tokens_per_day: { type: 'int', default: 200_000, min: 1, max: 1_000_000_000, description: 'Provider tokens per UTC day, for this process; calls stop when they are used up.' },
    timeout_seconds: { type: 'int', default: 30, min: 1, max: 60, description: 'Deadline of one provider call, in seconds.' },
  },
  scopes: [{ name: 'ai:write', description: 'Generate opportunities and change their status on the token’s sites (site admins)' }],
  metadataMigrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  dashboard: {
    sitePanels: [
      {
        id: 'opportunities',
        title: 'Opportunities',
        kind: 'table',
        path: '/opportunities',
        items: 'opportunities',
        columns: [
          { key: 'text', label: 'Opportunity' },
          { key: 'created_at', label: 'Found', format: 'datetime' },
        ],
        // A run that ends saves new ones: read again while the page is open, as the runs panel is.
        refreshSeconds: 10,
        actions: [{ id: 'generate', label: 'Generate opportunities', path: '/runs' }],
        rowActions: [
          { id: 'save', label: 'Save', method: 'POST', path: '/opportunities/{id}/save' },
          { id: 'done', label: 'Done', method: 'POST', path: '/opportunities/{id}/done' },
          { id: 'dismiss', label: 'Dismiss', method: 'POST', path: '/opportunities/{id}/dismiss', danger: true },
        ],
        empty: 'No new opportunities. Site admins look for them in the range shown with Generate opportunities.',
      },
      {
        id: 'site-runs',
        title: 'Opportunity runs',
        kind: 'table',
        path: '/runs',
        items: 'runs',
        refreshSeconds: 5,
        columns: [
          { key: 'created_at', label: 'Asked', format: 'datetime' },
          { key: 'range_from', label: 'From' },
          { key: 'range_to', label: 'To' },
          { key: 'status', label: 'Status' },
          { key: 'error_category', label: 'Error' },
          { key: 'opportunities', label: 'Opportunities', numeric: true },
        ],
        empty: 'No run yet.',
      },
    ],
    adminPage: {
      title: 'AI',
      navLabel: 'AI',
      panels: [
        {
          id: 'usage',
          title: 'Usage of this process',
          kind: 'kpis',
          path: '/usage',
          refreshSeconds: 30,
          kpis: [
            { key: 'requests_last_minute', label: 'Requests in the last minute' },
            { key: 'requests_per_minute', label: 'Requests per minute allowed' },
            { key: 'tokens_today', label: 'Tokens today' },
            { key: 'tokens_per_day', label: 'Tokens per day allowed' },
          ],
        },
        {
          id: 'settings',
          title: 'Settings (PLUMB_AI_*; the API key is never shown)',
          kind: 'table',
          path: '/settings',
          items: 'rows',
          columns: [
            { key: 'setting', label: 'Setting' },
            { key: 'value', label: 'Value' },
          ],
        },
        {
          id: 'runs',
          title: 'Recent runs',
          kind: 'table',
          path: '/runs',
          items: 'runs',
          refreshSeconds: 30,
          columns: [
            { key: 'created_at', label: 'Asked', format: 'datetime' },
            { key: 'site_domain', label: 'Site' },
            { key: 'range_from', label: 'From' },
            { key: 'range_to', label: 'To' },
            { key: 'status', label: 'Status' },
            { key: 'error_category', label: 'Error' },
            { key: 'opportunities', label: 'Opportunities', numeric: true },
            { key: 'input_tokens', label: 'Input tokens', numeric: true },
            { key: 'output_tokens', label: 'Output tokens', numeric: true },
          ],
          empty: 'No run yet.',
        },
      ],
    },
  },

  services(host) {
    const { settings } = host;
    if (settings.enabled && !settings.model) throw new Error('PLUMB_AI_MODEL is required when PLUMB_AI_ENABLED is true');
    // Without a key the Anthropic SDK would look for credentials of its own (env, config files).
    if (settings.enabled && settings.provider === 'anthropic' && !settings.api_key) throw new Error('PLUMB_AI_API_KEY is required for the anthropic provider');
    const provider: ProviderSettings = {
      provider: settings.provider as ProviderName,
      model: settings.model ?? '',
      baseUrl: settings.base_url ?? DEFAULT_BASE_URLS[settings.provider as ProviderName],
      apiKey: settings.api_key,
      timeoutMs: settings.timeout_seconds * 1000,
      allowPrivate: settings.allow_private_base_url,
    };
    const limiter = createLimiter({ requestsPerMinute: settings.requests_per_minute, tokensPerDay: settings.tokens_per_day });
    // What GET /settings answers: fixed once the node has started, so it is put together once.
    const current = {
      enabled: settings.enabled,
      provider: provider.provider,
      model: settings.model ?? null,
      base_url: provider.baseUrl ?? '',
      api_key_set: Boolean(settings.api_key),
      allow_private_base_url: settings.allow_private_base_url,
      requests_per_minute: settings.requests_per_minute,
      tokens_per_day: settings.tokens_per_day,
      timeout_seconds: settings.timeout_seconds,
    };
    const shown = (value: unknown) => (value === null || value === '' ? '—' : typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value));
    const activeSettings = { ...current, rows: Object.entries(current).map(([setting, value]) => ({ setting, value: shown(value) })) };
    const queue = createRunQueue(host, provider, limiter);
    /**
     * Runs left queued or running by a process that stopped are never worked again: once older
     * than any run lasts, they end as interrupted (all at start, a site's before it asks again,
     * so a stopped node never blocks a site's next run).
     */
    const endInterrupted = (siteId: string | null) =>
      host.metadata.query(
        `WITH stale AS (UPDATE runs SET status = 'failed', error_category = 'interrupted', finished_at = now()
                         WHERE status IN ('queued', 'running') AND created_at < now() - interval '10 minutes' AND ($1::uuid IS NULL OR site_id = $1)
                         RETURNING id)
         INSERT INTO run_events (run_id, event) SELECT id, 'failed' FROM stale`,
        [siteId],
      );
    void host.whenStoresReady(async () => void (await endInterrupted(null)));

    const tags = ['plugin: ai'];
    const runOf = async (siteId: string, runId: string) => {
      const { rows } = await host.metadata.query<typeof Run.static>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 AND site_id = $2`, [runId, siteId]);
      if (!rows[0]) throw notFound('Run not found');
      return rows[0];
    };
    const statusChange = (verb: string, status: OpportunityStatus, summary: string) =>
      action({
        rest: `POST /api/sites/:id/plugins/ai/opportunities/:opportunityId/${verb}`,
        auth: 'any',
        access: { site: { param: 'id', role: 'admin', scope: 'ai:write' } },
        params: { id: 'uuid', opportunityId: 'uuid' },
        openapi: { summary, tags, response: object({ message: Type.String(), opportunity: Opportunity }), errors: [404] },
        async handler(ctx) {
          const { id, opportunityId } = ctx.params as { id: string; opportunityId: string };
          const { rows } = await host.metadata.query<OpportunityRow>(
            `UPDATE opportunities SET status = $3, updated_at = now() WHERE id = $1 AND site_id = $2 RETURNING ${OPPORTUNITY_COLUMNS}`,
            [opportunityId, id, status],
          );
          if (!rows[0]) throw notFound('Opportunity not found');
          return { message: `Marked ${status}.`, opportunity: opportunityOf(rows[0]) };
        },
      });

    return [
      {
        name: 'plugins.ai',
        settings: { rest: '/' },
        actions: {
          opportunities: action({
            rest: 'GET /api/sites/:id/plugins/ai/opportunities',
            auth: 'any',
            access: { site: { param: 'id', role: 'viewer', scope: 'stats:read' } },
            params: { id: 'uuid', status: { type: 'enum', values: [...STATUSES], optional: true } },
            openapi: { summary: 'The site’s opportunities of one status (new unless given), in the order the provider ranked them, newest run first', tags, response: object({ opportunities: Type.Array(Opportunity) }) },
            async handler(ctx) {
              const { id, status = 'new' } = ctx.params as { id: string; status?: OpportunityStatus };
              const { rows } = await host.metadata.query<OpportunityRow>(
                `SELECT ${OPPORTUNITY_COLUMNS} FROM opportunities WHERE site_id = $1 AND status = $2 ORDER BY created_at DESC, rank LIMIT 100`,
                [id, status],
              );
              return { opportunities: rows.map(opportunityOf) };
            },
          }),

          generate: action({
            rest: 'POST /api/sites/:id/plugins/ai/runs',
            auth: 'any',
            access: { site: { param: 'id', role: 'admin', scope: 'ai:write' } },
            params: { id: 'uuid', from: { type: 'string' }, to: { type: 'string' } },
            openapi: {
              summary: 'Find opportunities in the days from–to (the site’s time zone), compared with as many days before: answers 202 with the run at once, which then ends completed or failed (site admins); 409 when AI is off or a run of the site is under way',
              tags,
              successStatus: 202,
              response: object({ message: Type.String(), run: Run }),
              errors: [409],
            },
            async handler(ctx) {
              const { id, from, to } = ctx.params as { id: string; from: string; to: string };
              checkDays(from, to);
              if (!settings.enabled) throw conflict('The AI features are off on this instance (PLUMB_AI_ENABLED).');
              const site = await host.site(id);
              if (!site) throw notFound('Site not found');
              await endInterrupted(id);
              const runId = randomUUID();
              const user = (ctx.meta as { user?: { email: string } }).user;
              try {
                await host.metadata.transaction(async (tx) => {
                  await tx.query(
                    `INSERT INTO runs (id, site_id, feature, provider, model, range_from, range_to, status, requested_by)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8)`,
                    [runId, id, FEATURE, provider.provider, provider.model, from, to, user?.email ?? null],
                  );
                  await tx.query("INSERT INTO run_events (run_id, event) VALUES ($1, 'queued')", [runId]);
                });
              } catch (err) {
                if ((err as { code?: string }).code === '23505') throw conflict('A run of this site is already queued or under way; wait for it to end.');
                throw err;
              }
              const run = await runOf(id, runId);
              queue.enqueue(runId);
              (ctx.meta as { $statusCode?: number }).$statusCode = 202;
              // The dashboard keeps this message on screen after the run has ended: it must stay true then.
              return { message: `Run asked for ${from} to ${to}: its state shows under Opportunity runs, and what it finds shows here.`, run };
            },
          }),

          siteRuns: action({
            rest: 'GET /api/sites/:id/plugins/ai/runs',
            auth: 'any',
            access: { site: { param: 'id', role: 'admin', scope: 'ai:write' } },
            params: { id: 'uuid' },
            openapi: { summary: 'The site’s last 5 runs, newest first: each one’s state and, when it failed, why (site admins)', tags, response: object({ runs: Type.Array(Run) }) },
            async handler(ctx) {
              const { id } = ctx.params as { id: string };
              const { rows } = await host.metadata.query<typeof Run.static>(`SELECT ${RUN_COLUMNS} FROM runs WHERE site_id = $1 ORDER BY created_at DESC, id LIMIT 5`, [id]);
              return { runs: rows };
            },
          }),

          run: action({
            rest: 'GET /api/sites/:id/plugins/ai/runs/:runId',
            auth: 'any',
            access: { site: { param: 'id', role: 'admin', scope: 'ai:write' } },
            params: { id: 'uuid', runId: 'uuid' },
            openapi: { summary: 'A run of the site: its state, lifecycle, usage and hashes (site admins)', tags, response: object({ run: Run }), errors: [404] },
            async handler(ctx) {
              const { id, runId } = ctx.params as { id: string; runId: string };
              return { run: await runOf(id, runId) };
            },
          }),

          save: statusChange('save', 'saved', 'Keep an opportunity for later (site admins)'),
          done: statusChange('done', 'done', 'Mark an opportunity as acted on (site admins)'),
          dismiss: statusChange('dismiss', 'dismissed', 'Dismiss an opportunity (site admins)'),
          reopen: statusChange('reopen', 'new', 'Put an opportunity back among the new ones (site admins)'),

          settings: action({
            rest: 'GET /api/plugins/ai/settings',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: { summary: 'The AI settings, without the API key (instance administrators)', tags, response: Settings },
            async handler() {
              return activeSettings;
            },
          }),

          usage: action({
            rest: 'GET /api/plugins/ai/usage',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: { summary: 'This process’s provider requests and tokens against its limiter (instance administrators)', tags, response: Usage },
            async handler() {
              return limiter.usage();
            },
          }),

          runs: action({
            rest: 'GET /api/plugins/ai/runs',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: { summary: 'The last 50 runs of every site, newest first, each with its site’s domain (instance administrators)', tags, response: object({ runs: Type.Array(AdminRun) }) },
            async handler() {
              const { rows } = await host.metadata.query<typeof Run.static>(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY created_at DESC, id LIMIT 50`);
              const siteIds = [...new Set(rows.map((run) => run.site_id))];
              const domains = new Map(await Promise.all(siteIds.map(async (siteId) => [siteId, (await host.site(siteId))?.domain ?? null] as const)));
              return { runs: rows.map((run) => ({ ...run, site_domain: domains.get(run.site_id) ?? null })) };
            },
          }),
        },
      },
    ];
  },
});
