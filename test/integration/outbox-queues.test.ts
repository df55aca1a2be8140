// What the webhook and mail queues tell their send loop in one read, on PGlite: when the next item
// falls due (none when nothing waits, which the loop's sweep then leaves alone) and whether a
// claim's lease has expired, the only case in which the sweep writes.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { silentLog } from '../../lib/log.ts';
import { enqueueMail } from '../../lib/mail/outbox.ts';
import { createMailQueue } from '../../lib/mail/queue.ts';
import type { OutboxQueue, SendOutcome } from '../../lib/outbox/send-loop.ts';
import { type MetadataStore, openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { createDeliveryQueue } from '../../lib/webhooks/queue.ts';
import { tempDataDirWithPglite } from '../support/instance.ts';

let dataDir: string;
let store: MetadataStore;

beforeAll(async () => {
  dataDir = await tempDataDirWithPglite('plumb-outbox-queues-');
  store = await openMetadataStore({ dataDir, log: silentLog });
});

afterAll(async () => {
  await store?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface QueueKind {
  table: string;
  queue: () => Pick<OutboxQueue<unknown, SendOutcome>, 'outlook' | 'requeueStalled'> & { claimOne: (leaseSeconds: number) => Promise<unknown[]> };
  /** Queues one item due `inSeconds` from now (negative: overdue). */
  add: (inSeconds: number) => Promise<void>;
}

const webhookId = randomUUID();
const KINDS: [string, QueueKind][] = [
  [
    'webhook deliveries',
    {
      table: 'webhook_deliveries',
      queue: () => {
        const queue = createDeliveryQueue(() => store);
        return { ...queue, claimOne: (leaseSeconds) => queue.claim(1, 1, leaseSeconds) };
      },
      async add(inSeconds) {
        await store.query(
          `INSERT INTO webhooks (id, scope, name, url, events, secret_sealed) VALUES ($1, 'instance', 'Feed', 'https://hooks.example/plumb', '{team.created}', 'sealed')
           ON CONFLICT (id) DO UPDATE SET enabled = true`,
          [webhookId],
        );
        const eventId = randomUUID();
        await store.query(`INSERT INTO webhook_events (id, type, data) VALUES ($1, 'team.created', '{}')`, [eventId]);
        await store.query(
          `INSERT INTO webhook_deliveries (id, event_id, webhook_id, status, body, next_attempt_at)
           VALUES (gen_random_uuid(), $1, $2, 'pending', '{}', now() + make_interval(secs => $3))`,
          [eventId, webhookId, inSeconds],
        );
      },
    },
  ],
  [
    'mail messages',
    {
      table: 'mail_messages',
      queue: () => {
        const queue = createMailQueue(() => store);
        return { ...queue, claimOne: (leaseSeconds) => queue.claim(1, leaseSeconds) };
      },
      async add(inSeconds) {
        const id = await enqueueMail(store, { to: 'someone@example.com', template: 'test', params: { requested_by: 'owner@example.com' } });
        await store.query('UPDATE mail_messages SET next_attempt_at = now() + make_interval(secs => $2) WHERE id = $1', [id, inSeconds]);
      },
    },
  ],
];

describe.each(KINDS)('the outlook of the queue of %s', (_name, kind) => {
  beforeEach(async () => {
    await store.query(`DELETE FROM ${kind.table}`);
  });

  it('is nothing waiting and nothing stalled for an empty queue', async () => {
    expect(await kind.queue().outlook()).toEqual({ secondsUntilNextDue: null, stalledClaims: false });
  });

  it('counts the seconds until the earliest item falls due, and 0 for one overdue', async () => {
    await kind.add(120);
    await kind.add(60);
    const later = await kind.queue().outlook();
    expect(later.stalledClaims).toBe(false);
    expect(later.secondsUntilNextDue).toBeGreaterThan(55);
    expect(later.secondsUntilNextDue).toBeLessThanOrEqual(60);
    await kind.add(-5);
    expect(await kind.queue().outlook()).toEqual({ secondsUntilNextDue: 0, stalledClaims: false });
  });

  it('finds an expired claim, and nothing stalled once it is queued again', async () => {
    const queue = kind.queue();
    await kind.add(0);
    expect(await queue.claimOne(60)).toHaveLength(1);
    // Claimed and its lease running: not waiting, not stalled.
    expect(await queue.outlook()).toEqual({ secondsUntilNextDue: null, stalledClaims: false });
    await store.query(`UPDATE ${kind.table} SET lease_expires_at = now() - interval '1 second' WHERE status = 'processing'`);
    expect(await queue.outlook()).toEqual({ secondsUntilNextDue: null, stalledClaims: true });
    expect(await queue.requeueStalled()).toBe(1);
    expect(await queue.outlook()).toEqual({ secondsUntilNextDue: 0, stalledClaims: false });
  });
});

describe('the outlook of the queue of webhook deliveries, for a disabled webhook', () => {
  it('is nothing waiting: its deliveries go out once it is enabled again, which wakes the dispatcher', async () => {
    const [, webhooks] = KINDS[0];
    await store.query('DELETE FROM webhook_deliveries');
    await webhooks.add(0);
    await store.query('UPDATE webhooks SET enabled = false WHERE id = $1', [webhookId]);
    expect(await webhooks.queue().outlook()).toEqual({ secondsUntilNextDue: null, stalledClaims: false });
  });
});
