// The webhook outbox: a change queues its operational event in the change's own transaction, so
// the event and its deliveries commit or roll back with it. A committed change therefore always
// has its event (a crash after the commit loses nothing), and a rolled-back one never has. Every
// code path that announces a change calls `queueOperationalEvent` with its transaction handle;
// it needs nothing else from the webhooks feature. Sending is the leader's dispatcher's job: it
// finds the rows on its next claim, at the latest one sweep interval later.
import { randomUUID } from 'node:crypto';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { type OperationalEvent, toOperationalEvent } from './catalog.ts';
import { envelopeBody } from './signing.ts';

export interface QueuedEvent {
  eventId: string;
  /** Empty when no webhook wanted the event, or when it had been recorded before. */
  deliveryIds: string[];
}

/** Writes the event and its deliveries to these webhooks; nothing when the id is already known. */
export async function queueFor(tx: MetadataQueryable, event: OperationalEvent & { id: string }, webhookIds: string[]): Promise<string[]> {
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
 * In the caller's transaction: the event for every enabled webhook subscribed to its type
 * (instance webhooks always, site webhooks when the event is about their site), with one
 * delivery each. `type` is the catalog's ('site.created'); `payload` the internal fields, turned
 * into the documented `data` here. Nothing is written when no webhook wants the event or the type
 * is not in the catalog. `id` (a deterministic one for replayable events) defaults to a new one.
 */
export async function queueOperationalEvent(tx: MetadataQueryable, type: string, payload: Record<string, unknown>, id: string = randomUUID()): Promise<QueuedEvent> {
  const event = toOperationalEvent(type, payload);
  if (!event) return { eventId: id, deliveryIds: [] };
  return queueEvent(tx, event, id);
}

/** In the caller's transaction: an event already in its documented shape, for every webhook that wants it. */
export async function queueEvent(tx: MetadataQueryable, event: OperationalEvent, id: string = randomUUID()): Promise<QueuedEvent> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM webhooks
      WHERE enabled AND deleted_at IS NULL AND $1 = ANY (events)
        AND (scope = 'instance' OR (scope = 'site' AND site_id = $2::uuid))
      ORDER BY created_at, id`,
    [event.type, event.siteId],
  );
  return { eventId: id, deliveryIds: await queueFor(tx, { ...event, id }, rows.map((r) => r.id)) };
}
