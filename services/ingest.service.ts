// Everything that brings data in: the three public tracker routes, server-side ingest for API
// clients, and AI-crawler fetch forwarding. Each accepted event is durable before the 202 (the
// ingest sink: disk journal, or JetStream in a cluster); a writer moves it to the analytics store.
// Server ingest takes the sink's `leader` path, which in a cluster is the leader node.
import type { Context, ServiceSchema } from 'moleculer';
import { type GeoLookup, openGeoDatabase } from '../lib/ingest/enrich/geo.ts';
import * as aiFetches from '../lib/ingest/ai-fetches.ts';
import { fingerprintOf, idempotencyKeyOf, once } from '../lib/ingest/idempotency.ts';
import * as ingest from '../lib/ingest/pipeline.ts';
import { createRejectionCounter, type RejectionCounter } from '../lib/ingest/rejections.ts';
import { createSaltRing } from '../lib/ingest/salts.ts';
import {
  type AiFetch,
  MAX_BATCH_ITEMS,
  SERVER_EVENT,
  SERVER_PAGEVIEW,
  type ServerBatchItem,
  type ServerEvent,
  type ServerPageview,
  TRACKER_EVENT,
  TRACKER_PAGEVIEW,
  TRACKER_WEB_VITAL,
  type TrackerEvent,
  type TrackerPageview,
  type TrackerWebVital,
} from '../lib/ingest/schemas.ts';
import { createVisitTracker } from '../lib/ingest/visit-tracker.ts';
import type { IngestSink } from '../lib/ingest/sink.ts';
import * as I from '../lib/ingest/responses.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent } from '../lib/openapi/responses.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';

/** The tracker posts at most a few hundred bytes; anything near this is not our script. */
const TRACKER_BODY_LIMIT = 16 * 1024;
const SERVER_BODY_LIMIT = 64 * 1024;
const BATCH_BODY_LIMIT = 4 * 1024 * 1024;
const REJECTION_FLUSH_MS = 10_000;

interface IngestState {
  deps: ingest.IngestDeps;
  /** The same, with server ingest's durable path (the leader). */
  serverDeps: ingest.IngestDeps;
  sink: IngestSink;
  geo: GeoLookup;
  rejections: RejectionCounter;
  timers: NodeJS.Timeout[];
}

type Ctx<P> = Context<P, RequestMeta>;

const accepted = <T = null>(ctx: Ctx<unknown>, body: T = null as T): T => {
  ctx.meta.$statusCode = 202;
  return body;
};

export default function createIngestService(runtime: Runtime): ServiceSchema {
  const { config, log } = runtime;
  let state: IngestState | undefined;
  const started = () => {
    if (!state) throw new Error('ingest service is not started');
    return state;
  };
  const deps = () => started().deps;
  const serverDeps = () => started().serverDeps;
  // No request timeout: a tracker hit waits only for this node's journal, and a timeout could not
  // take back an append already on its way to the disk (it would answer 504 for a stored event);
  // it also cost every hit a timer.
  const tracker = { auth: 'none' as const, crossOrigin: true, textBody: true, bodyLimit: TRACKER_BODY_LIMIT, rateLimit: 'ingest' as const, hotPath: true, timeout: 0 };
  const server = { bodyLimit: SERVER_BODY_LIMIT, rateLimit: 'ingest' as const, hotPath: true, auth: 'client' as const };

  return {
    name: 'ingest',
    settings: { rest: '/' },
    actions: {
      pageview: action({
        rest: 'POST /ingest',
        ...tracker,
        params: TRACKER_PAGEVIEW,
        openapi: { summary: 'Tracker pageview (cross-origin; site resolved from Origin)', tags: ['ingest'], successStatus: 202, response: NoContent, errors: [403] },
        async handler(ctx: Ctx<TrackerPageview>) {
          await ingest.trackerPageview(deps(), ctx.params, ctx.meta.request);
          return accepted(ctx);
        },
      }),
      event: action({
        rest: 'POST /ingest/event',
        ...tracker,
        params: TRACKER_EVENT,
        openapi: { summary: 'Tracker custom or automatic event', tags: ['ingest'], successStatus: 202, response: NoContent, errors: [403] },
        async handler(ctx: Ctx<TrackerEvent>) {
          await ingest.trackerEvent(deps(), ctx.params, ctx.meta.request);
          return accepted(ctx);
        },
      }),
      webVital: action({
        rest: 'POST /ingest/web-vitals',
        ...tracker,
        params: TRACKER_WEB_VITAL,
        openapi: { summary: 'Web vitals add-on measurement', tags: ['ingest'], successStatus: 202, response: NoContent, errors: [403] },
        async handler(ctx: Ctx<TrackerWebVital>) {
          await ingest.trackerWebVital(deps(), ctx.params, ctx.meta.request);
          return accepted(ctx);
        },
      }),
      serverPageview: action({
        rest: 'POST /api/ingest/server/pageview',
        ...server,
        params: SERVER_PAGEVIEW,
        openapi: { summary: 'Server-side pageview (API client with ingest:write on the site)', tags: ['ingest'], successStatus: 202, response: I.ServerAccepted },
        async handler(ctx: Ctx<ServerPageview>) {
          return accepted(ctx, { status: await ingest.serverPageview(serverDeps(), ctx.params, ctx.meta.apiClient) });
        },
      }),
      serverEvent: action({
        rest: 'POST /api/ingest/server/event',
        ...server,
        params: SERVER_EVENT,
        openapi: { summary: 'Server-side custom event', tags: ['ingest'], successStatus: 202, response: I.ServerAccepted },
        async handler(ctx: Ctx<ServerEvent>) {
          return accepted(ctx, { status: await ingest.serverEvent(serverDeps(), ctx.params, ctx.meta.apiClient) });
        },
      }),
      serverBatch: action({
        rest: 'POST /api/ingest/server/batch',
        hotPath: true,
        auth: 'client',
        bodyLimit: BATCH_BODY_LIMIT,
        rateLimit: 'ingest',
        params: { items: { type: 'array', min: 1, max: MAX_BATCH_ITEMS, items: 'object' } },
        openapi: { summary: `Up to ${MAX_BATCH_ITEMS} server-side pageviews/events; per-item results`, tags: ['ingest'], successStatus: 202, response: I.BatchAccepted },
        async handler(ctx: Ctx<{ items: ServerBatchItem[] }>) {
          const answer = await ingest.serverBatch(serverDeps(), ctx.params.items, ctx.meta.apiClient);
          for (const result of answer.results) if (result.status === 'rejected') runtime.metrics.ingest('refused', result.code ?? 'rejected');
          return accepted(ctx, answer);
        },
      }),
      aiFetch: action({
        rest: 'POST /api/sites/:id/ingest/ai-fetch',
        auth: 'client',
        access: { site: { param: 'id', role: 'editor', scope: 'ai-fetch:write' } },
        bodyLimit: BATCH_BODY_LIMIT,
        rateLimit: 'ingest',
        params: { id: 'uuid', items: { type: 'array', min: 1, max: MAX_BATCH_ITEMS, items: 'object', optional: true } },
        openapi: {
          response: I.AiFetchesAccepted,
          summary: 'AI crawler fetches forwarded from server logs: one fetch as the body, or {items: [...]}',
          description:
            'Fields of a fetch: path (starting with /) or url (absolute, on the site’s domain or hostnames), status_code, content_type, response_time_ms, bytes, user_agent (a known AI agent), timestamp (RFC 3339). ' +
            'A single fetch is stored ({accepted: 1}) or refused with a 400 naming every bad field. A batch is judged item by item: its good fetches are stored, and `results` names each bad one with its fields. ' +
            'An Idempotency-Key header (1–200 visible ASCII characters) makes a resend safe: the same key for the site within 24 hours gets the first answer again (with Idempotent-Replayed: true) and stores nothing; ' +
            'a 409 answers a key used for other content, or one whose first request is still in progress (with Retry-After).',
          tags: ['ingest'],
          successStatus: 202,
          errors: [409],
        },
        async handler(ctx: Ctx<{ id: string; items?: AiFetch[] } & AiFetch>) {
          const { id, items, ...single } = ctx.params;
          const client = ctx.meta.apiClient;
          const store = () => (items ? aiFetches.aiFetchBatch(deps(), id, items, client) : aiFetches.aiFetch(deps(), id, single as AiFetch, client));
          const key = idempotencyKeyOf(ctx.meta.request.headers);
          if (key === undefined) return accepted(ctx, await store());
          const fingerprint = fingerprintOf(items ?? single);
          const { answer, replayed } = await once({ db: runtime.metadata(), log }, { siteId: id, key, fingerprint }, store);
          if (replayed) ctx.meta.$responseHeaders = { ...ctx.meta.$responseHeaders, 'Idempotent-Replayed': 'true' };
          return accepted(ctx, answer);
        },
      }),
    },

    async started() {
      const geo = await openGeoDatabase(config.geoipDb);
      const stored = createRejectionCounter(runtime.metadata);
      // Refusals are stored per site and day, and counted for /metrics as they happen.
      const rejections: RejectionCounter = {
        count(siteId, reason, at) {
          runtime.metrics.ingest('refused', reason);
          stored.count(siteId, reason, at);
        },
        flush: () => stored.flush(),
      };
      const salts = createSaltRing(runtime.metadata);
      // Extension point: every stored batch is announced to this node's services as the local
      // event `ingest.batch.stored` ({ records }), after the analytics store has it (goals judge
      // new conversions there). Local only: records never cross the transporter. The writer waits
      // for the handlers and writes the batch again if one throws (see WriterOptions.onStored).
      // The sink keeps rows encoded until read (a record's `siteId` is there without decoding its
      // row): a listener reads only what it needs, a slice at a time (see the goals detector).
      const onStored = async (records: readonly ingest.JournalRecord[]) => {
        await this.broker.broadcastLocal('ingest.batch.stored', { records }, { throwError: true });
        runtime.metrics.ingestStored();
      };
      const visitTimeoutMs = config.sessionTimeoutMinutes * 60_000;
      const onJournalSynced = (seconds: number) => runtime.metrics.journalSynced(seconds);
      const sink = await runtime.openIngestSink({ broker: this.broker, onStored, visitTimeoutMs, onJournalSynced });
      const flushRejections = () => rejections.flush().catch((err: Error) => log.warn({ err: err.message }, 'could not store ingest rejection counts'));
      const deps: ingest.IngestDeps = {
        journal: sink.local,
        geo,
        salts,
        rejections,
        visits: createVisitTracker({ timeoutMs: visitTimeoutMs }),
        sites: runtime.sites,
        // The sink wakes its own writer; this only counts.
        appended: (items) => runtime.metrics.ingest('accepted', '', items),
      };
      state = { geo, rejections, sink, timers: [setInterval(flushRejections, REJECTION_FLUSH_MS)], deps, serverDeps: { ...deps, journal: sink.leader } };
    },

    async stopped() {
      if (!state) return;
      for (const timer of state.timers) clearInterval(timer);
      await state.sink.close();
      await state.rejections.flush().catch(() => undefined);
      state.geo.close();
      state = undefined;
    },
  };
}
