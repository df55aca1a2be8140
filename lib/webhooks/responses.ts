// Response schemas of the webhook management routes (services/webhooks.service.ts), published in
// the OpenAPI document and typing the handlers.
import { Type } from '@sinclair/typebox';
import { DateTime, envelope, nullable, object, page, stringEnum, Uuid } from '../openapi/responses.ts';

const Scope = stringEnum(['site', 'instance']);

export const Catalog = object({
  scope: Scope,
  events: Type.Array(
    object({
      type: Type.String(),
      scope: { ...Scope, description: 'site: site and instance webhooks may subscribe; instance: instance webhooks only' },
      description: Type.String(),
      fields: Type.Unsafe<readonly string[]>({ type: 'array', items: { type: 'string' }, description: 'Fields of the event’s data, in the order they are sent' }),
    }),
  ),
});

export const Webhook = object({
  id: Uuid,
  scope: Scope,
  site_id: nullable(Uuid),
  name: Type.String(),
  description: Type.String(),
  url: Type.String({ format: 'uri' }),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  created_at: DateTime,
  updated_at: DateTime,
  secret_rotated_at: DateTime,
});
export const WebhookPage = page(Webhook);
export const WebhookEnvelope = envelope('webhook', Webhook);

/** Create and rotate only: the signing secret is never shown again. */
export const WebhookWithSecret = object({ webhook: Webhook, secret: Type.String({ description: 'Signs each delivery (X-Plumb-Signature); shown only in this answer' }) });

export const TestQueued = object({ event_id: Uuid, delivery_ids: Type.Array(Uuid) });

export const DeliveryPage = page(
  object(
    {
      id: Uuid,
      event_id: Uuid,
      event_type: Type.String(),
      status: stringEnum(['pending', 'processing', 'retrying', 'succeeded', 'failed', 'cancelled']),
      attempts: Type.Integer({ minimum: 0 }),
      response_status: nullable(Type.Integer()),
      error: nullable(Type.String()),
      created_at: DateTime,
      next_attempt_at: nullable(DateTime),
      completed_at: nullable(DateTime),
      attempt_log: Type.Array(
        object({ attempt: Type.Integer({ minimum: 1 }), started_at: DateTime, duration_ms: nullable(Type.Integer()), response_status: nullable(Type.Integer()), error: nullable(Type.String()) }),
      ),
    },
    { description: 'One delivery: never its body, never a secret' },
  ),
);
