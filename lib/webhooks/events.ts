// Turns an operational event into queued deliveries: in ONE transaction the event row and one
// delivery per matching enabled webhook (the site's own webhooks and every instance webhook
// subscribed to the type). The event id is the primary key, so an event emitted twice (a replayed
// goal.converted) queues nothing the second time.
import { randomUUID } from 'node:crypto';
import { conflict } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import type { OperationalEvent } from './catalog.ts';
import { envelopeBody } from './signing.ts';
import { getWebhook, type WebhookOwner } from './webhooks.ts';

export interface QueuedEvent {
  eventId: string;
  /** Empty when no webhook wanted the event, or when it had been recorded before. */
  deliveryIds: string[];
}

/** Writes the event and its deliveries to these webhooks; nothing when the id is already known. */
async function queueFor(tx: MetadataQueryable, event: OperationalEvent & { id: string }, webhookIds: string[]): Promise<string[]> {
  if (webhookIds.length === 0) return [];
  const inserted = await tx.query<{ created_at: Date | string }>(
    `INSERT INTO webhook_events (id, type, site_id, data) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO NOTHING RETURNING created_at`,
    [event.id, event.type, event.siteId, JSON.stringify(event.data)],
  );
  if (inserted.rowCount === 0) return [];
  const createdAt = new Date(inserted.rows[0].created_at).toISOString();
  const deliveryIds = webhookIds.map(() => randomUUID());
  const bodies = deliveryIds.map((deliveryId) => envelopeBody({ id: event.id, type: event.type, createdAt, data: event.data }, deliveryId));
  await tx.query(
    `INSERT INTO webhook_deliveries (id, event_id, webhook_id, status, body)
     SELECT d.id, $2, d.webhook_id, 'pending', d.body FROM unnest($1::uuid[], $3::uuid[], $4::text[]) AS d (id, webhook_id, body)`,
    [deliveryIds, event.id, webhookIds, bodies],
  );
  return deliveryIds;
}

/**
 * Records an event for every enabled webhook subscribed to its type: instance webhooks always,
 * site webhooks when the event is about their site. `id` defaults to a new one.
 */
export async function recordEvent(store: MetadataStore, event: OperationalEvent & { id?: string }): Promise<QueuedEvent> {
  const eventId = event.id ?? randomUUID();
  return store.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM webhooks
        WHERE enabled AND deleted_at IS NULL AND $1 = ANY (events)
          AND (scope = 'instance' OR (scope = 'site' AND site_id = $2::uuid))
        ORDER BY created_at, id`,
      [event.type, event.siteId],
    );
    return { eventId, deliveryIds: await queueFor(tx, { ...event, id: eventId }, rows.map((r) => r.id)) };
  });
}

/** `webhook.test` for this one webhook, whatever it subscribes to ('Send test'). 409 when disabled. */
export async function queueTestEvent(store: MetadataStore, owner: WebhookOwner, webhookId: string): Promise<QueuedEvent> {
  const eventId = randomUUID();
  return store.transaction(async (tx) => {
    const webhook = await getWebhook(tx, owner, webhookId);
    if (!webhook.enabled) throw conflict('The webhook is disabled; enable it to send a test delivery');
    const event: OperationalEvent & { id: string } = {
      id: eventId,
      type: 'webhook.test',
      siteId: webhook.site_id,
      data: { webhook_id: webhook.id, scope: webhook.scope, site_id: webhook.site_id, message: 'Test delivery queued from Plumb' },
    };
    return { eventId, deliveryIds: await queueFor(tx, event, [webhook.id]) };
  });
}
