// The 'Send test' event of one webhook, queued in a transaction of its own. Changes queue theirs
// in their own transaction, and goal conversions theirs before the ingest writer acknowledges the
// batch (outbox.ts).
import { randomUUID } from 'node:crypto';
import { conflict } from '../errors.ts';
import type { MetadataStore } from '../stores/metadata/index.ts';
import type { OperationalEvent } from './catalog.ts';
import { type QueuedEvent, queueFor } from './outbox.ts';
import { getWebhook, type WebhookOwner } from './webhooks.ts';

export type { QueuedEvent } from './outbox.ts';

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
