// Outbound webhooks: management for instance webhooks (/api/admin/webhooks, instance
// owners and admins) and site webhooks (/api/sites/{id}/webhooks, site owners and admins), people
// only; `goal.converted` turned into queued deliveries (the other services queue their changes'
// events in their own transactions, lib/webhooks/outbox.ts); and, on the leader, the dispatcher
// that sends them. Thin actions over lib/webhooks.
import { envName } from '../lib/brand.ts';
import type { Context, ServiceSchema } from 'moleculer';
import type { AccessRule } from '../lib/auth/access.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent } from '../lib/openapi/responses.ts';
import type { SendLoop } from '../lib/outbox/send-loop.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import * as K from '../lib/webhooks/responses.ts';
import { catalogFor, isKnownType } from '../lib/webhooks/catalog.ts';
import { createDispatcher } from '../lib/webhooks/dispatcher.ts';
import { type QueuedEvent, queueTestEvent } from '../lib/webhooks/events.ts';
import { createDeliveryQueue } from '../lib/webhooks/queue.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  replaceWebhook,
  rotateSecret,
  WEBHOOK_FIELDS,
  type WebhookDeps,
  type WebhookInput,
  type WebhookOwner,
  webhookSecretBox,
} from '../lib/webhooks/webhooks.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P> = Context<P, RequestMeta>;
type OwnerParams = { id?: string };
type WebhookParams = OwnerParams & { webhookId: string };

/**
 * The network the webhooks reach, when not the host's: the node never passes these (its webhooks
 * use the system's DNS and CA store); a test that builds the service with its own receivers does.
 */
export interface WebhooksNetwork {
  /** DNS for destination checks and deliveries. */
  resolver?: (host: string) => Promise<string[]>;
  /** CA certificates trusted for https deliveries instead of the default store. */
  ca?: string | Buffer;
}

const tags = ['webhooks'];
const NO_STORE = { 'Cache-Control': 'no-store' };

/** The two kinds of webhook owner, each with its routes, its access rule and its path params. */
const OWNERS = {
  instance: {
    path: '/api/admin/webhooks',
    access: { instance: 'admin' } as AccessRule,
    params: {},
    owner: (_params: OwnerParams): WebhookOwner => ({ scope: 'instance' }),
    label: 'instance',
  },
  site: {
    path: '/api/sites/:id/webhooks',
    access: { site: { param: 'id', role: 'admin' } } as AccessRule,
    params: { id: 'uuid' },
    owner: (params: OwnerParams): WebhookOwner => ({ scope: 'site', siteId: params.id! }),
    label: 'site',
  },
} as const;

export default function createWebhooksService(runtime: Runtime, network: WebhooksNetwork = {}): ServiceSchema {
  const { config, log } = runtime;
  const secrets = webhookSecretBox(runtime.jwtSecret);
  const allowDevelopmentTargets = config.webhookAllowDevelopmentTargets;
  const deps = (): WebhookDeps => ({ store: runtime.metadata(), secrets, policy: { allowDevelopmentTargets, resolver: network.resolver }, addedEvents: runtime.addedWebhookEvents });
  let dispatcher: SendLoop | undefined;
  let unplug: (() => Promise<void>) | undefined;

  /** Wakes the leader's dispatcher, wherever it runs, when something was queued. */
  const queued = (ctx: Context<unknown>, result: QueuedEvent) => {
    if (result.deliveryIds.length > 0) ctx.broadcast('webhooks.queued', {});
  };

  function actionsFor(kind: keyof typeof OWNERS) {
    const { path, access, params: ownerParams, owner, label } = OWNERS[kind];
    const manage = { auth: 'user' as const, access };
    const one = { ...ownerParams, webhookId: 'uuid' };
    return {
      [`${kind}Events`]: action({
        rest: `GET ${path}/events`,
        ...manage,
        params: { ...ownerParams },
        openapi: { summary: `Event types a ${label} webhook may subscribe to, with the fields of each type's data`, tags, response: K.Catalog },
        handler: () => ({ scope: kind, events: catalogFor(kind, runtime.addedWebhookEvents) }),
      }),
      [`${kind}List`]: action({
        rest: `GET ${path}`,
        ...manage,
        params: { ...ownerParams, ...pageParams },
        openapi: { summary: `The ${label}'s webhooks, oldest first (secrets are never shown again)`, tags, response: K.WebhookPage },
        handler: (ctx: Ctx<OwnerParams & PageQuery>) => listWebhooks(runtime.metadata(), owner(ctx.params), ctx.params),
      }),
      [`${kind}Create`]: action({
        rest: `POST ${path}`,
        location: `${path}/{webhook.id}`,
        ...manage,
        params: { $$strict: true, ...ownerParams, ...WEBHOOK_FIELDS },
        openapi: { summary: `Create a ${label} webhook; the signing secret is in this answer only`, tags, successStatus: 201, response: K.WebhookWithSecret, errors: [409] },
        async handler(ctx: Ctx<OwnerParams & WebhookInput>) {
          const { id: _id, ...input } = ctx.params;
          const created = await createWebhook(deps(), ctx.meta.user!, owner(ctx.params), input);
          ctx.meta.$statusCode = 201;
          ctx.meta.$responseHeaders = NO_STORE;
          return created;
        },
      }),
      [`${kind}Get`]: action({
        rest: `GET ${path}/:webhookId`,
        ...manage,
        params: one,
        openapi: { summary: `One ${label} webhook`, tags, response: K.WebhookEnvelope },
        async handler(ctx: Ctx<WebhookParams>) {
          return { webhook: await getWebhook(runtime.metadata(), owner(ctx.params), ctx.params.webhookId) };
        },
      }),
      [`${kind}Replace`]: action({
        rest: `PUT ${path}/:webhookId`,
        ...manage,
        params: { $$strict: true, ...one, ...WEBHOOK_FIELDS },
        openapi: { summary: 'Replace a webhook’s name, description, URL, events and enabled state (omitted: empty description, enabled)', tags, response: K.WebhookEnvelope },
        async handler(ctx: Ctx<WebhookParams & WebhookInput>) {
          const { id: _id, webhookId, ...input } = ctx.params;
          const webhook = await replaceWebhook(deps(), ctx.meta.user!, owner(ctx.params), webhookId, input);
          // A webhook enabled again may have deliveries waiting: the dispatcher sends them now, not at its sweep.
          if (webhook.enabled) ctx.broadcast('webhooks.queued', {});
          return { webhook };
        },
      }),
      [`${kind}Delete`]: action({
        rest: `DELETE ${path}/:webhookId`,
        ...manage,
        params: one,
        openapi: { summary: 'Delete a webhook: deliveries not yet made are cancelled; the records are kept until retention', tags, successStatus: 204, response: NoContent },
        async handler(ctx: Ctx<WebhookParams>) {
          await deleteWebhook(deps(), ctx.meta.user!, owner(ctx.params), ctx.params.webhookId);
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),
      [`${kind}Rotate`]: action({
        rest: `POST ${path}/:webhookId/rotate`,
        ...manage,
        params: one,
        openapi: { summary: 'Replace the signing secret (shown in this answer only); waiting deliveries are signed with the new one', tags, response: K.WebhookWithSecret },
        async handler(ctx: Ctx<WebhookParams>) {
          ctx.meta.$responseHeaders = NO_STORE;
          return rotateSecret(deps(), ctx.meta.user!, owner(ctx.params), ctx.params.webhookId);
        },
      }),
      [`${kind}Test`]: action({
        rest: `POST ${path}/:webhookId/test`,
        ...manage,
        params: one,
        openapi: { summary: 'Queue a webhook.test delivery to this webhook (409 when it is disabled)', tags, successStatus: 202, response: K.TestQueued, errors: [409] },
        async handler(ctx: Ctx<WebhookParams>) {
          const result = await queueTestEvent(runtime.metadata(), owner(ctx.params), ctx.params.webhookId);
          queued(ctx, result);
          ctx.meta.$statusCode = 202;
          return { event_id: result.eventId, delivery_ids: result.deliveryIds };
        },
      }),
      [`${kind}Deliveries`]: action({
        rest: `GET ${path}/:webhookId/deliveries`,
        ...manage,
        params: { ...one, ...pageParams },
        openapi: { summary: 'Delivery history of a webhook, newest first: status, attempts, response status (never bodies or secrets)', tags, response: K.DeliveryPage },
        handler: (ctx: Ctx<WebhookParams & PageQuery>) => listDeliveries(runtime.metadata(), owner(ctx.params), ctx.params.webhookId, ctx.params),
      }),
    };
  }

  return {
    name: 'webhooks',
    settings: { rest: '/' },
    actions: { ...actionsFor('instance'), ...actionsFor('site') },

    events: {
      /**
       * A change announced after its commit (`ops.site.created`, `ops.team.member.added` …): its
       * event and deliveries were queued in that commit, so this only wakes the leader's dispatcher
       * at once. Were it lost, the dispatcher would find them at its next sweep.
       */
      'ops.**'(ctx: Context<unknown>) {
        if (isKnownType((ctx.eventName ?? '').slice('ops.'.length))) ctx.broadcast('webhooks.queued', {});
      },
      /** From goals.service, which queued the conversion's event before the ingest writer acknowledged its batch: wake the dispatcher. */
      'goal.converted'(ctx: Context<unknown>) {
        ctx.broadcast('webhooks.queued', {});
      },
      'webhooks.queued'() {
        dispatcher?.wake();
      },
    },

    started() {
      if (allowDevelopmentTargets) {
        log.warn(`${envName('WEBHOOK_ALLOW_DEVELOPMENT_TARGETS')} is on: webhooks may target http:// and loopback/private addresses. Development only: this removes the SSRF protection.`);
      }
      dispatcher = createDispatcher({
        queue: (epoch) => createDeliveryQueue(runtime.metadata, (fn) => runtime.fence.run(epoch, fn)),
        secrets,
        settings: {
          concurrency: config.webhookDeliveryConcurrency,
          perEndpointConcurrency: config.webhookPerEndpointConcurrency,
          timeoutSeconds: config.webhookDeliveryTimeout,
          maxAttempts: config.webhookMaxAttempts,
          retryBaseSeconds: config.webhookRetryBaseSeconds,
          retryMaxSeconds: config.webhookRetryMaxSeconds,
          sweepSeconds: config.webhookSweepSeconds,
          retentionDays: config.webhookRetentionDays,
          allowDevelopmentTargets,
        },
        log,
        resolver: network.resolver,
        ca: network.ca,
        onAttempt: (outcome) => runtime.metrics.webhookAttempt(outcome.ok, outcome.error),
      });
      // The node registered the leader job; this instance does its work while it runs.
      const current = dispatcher;
      unplug = runtime.webhookDispatch.plug({ start: (epoch) => current.start(epoch), stop: () => current.stop() });
    },

    async stopped() {
      await unplug?.();
      unplug = undefined;
      await dispatcher?.stop();
      dispatcher = undefined;
    },
  };
}
