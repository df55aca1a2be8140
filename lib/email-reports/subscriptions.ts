// A person's scheduled report subscriptions: one per site they can see, weekly or monthly
// ("off" deletes it), and the one-click unsubscribe token each report carries. The token is the
// subscription's id signed with the node's key for this purpose only (HMAC-SHA256): it needs no
// storage, proves nothing but "stop this subscription", and dies with the subscription.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { siteRoleOf } from '../auth/access.ts';
import { notFound } from '../errors.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { type Page, type PageQuery, pageOf } from '../pagination.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import type { Frequency } from './period.ts';

export interface Subscription {
  site_id: string;
  site_domain: string;
  frequency: Frequency;
  created_at: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PURPOSE = 'plumb email report unsubscribe\0';

const mac = (key: Uint8Array, subscriptionId: string) => createHmac('sha256', key).update(PURPOSE + subscriptionId).digest('base64url');

export const unsubscribeToken = (key: Uint8Array, subscriptionId: string) => `${subscriptionId}.${mac(key, subscriptionId)}`;

/** The subscription id a token names, or null for anything not signed by this instance. */
export function subscriptionOfToken(key: Uint8Array, token: string): string | null {
  const [id, signature, ...rest] = token.split('.');
  if (rest.length > 0 || !id || !signature || !UUID.test(id)) return null;
  const expected = Buffer.from(mac(key, id));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
}

/** The caller's subscriptions to sites they can still see, by site domain. */
export async function listSubscriptions(db: MetadataQueryable, user: Pick<UserPrincipal, 'id' | 'role'>, query: PageQuery): Promise<Page<Subscription>> {
  const { rows } = await db.query<Subscription>(
    `SELECT r.site_id, s.domain AS site_domain, r.frequency, r.created_at
       FROM email_report_subscriptions r JOIN sites s ON s.id = r.site_id AND s.deleted_at IS NULL
      WHERE r.user_id = $1 ORDER BY s.domain, r.site_id`,
    [user.id],
  );
  const visible: Subscription[] = [];
  for (const row of rows) if (await siteRoleOf(db, user, row.site_id)) visible.push({ ...row, created_at: new Date(row.created_at).toISOString() });
  return pageOf(visible.slice(query.offset, query.offset + query.limit), visible.length, query);
}

/** Sets the caller's frequency for a site (access already checked); 'off' removes the subscription. */
export async function setSubscription(db: MetadataQueryable, userId: string, siteId: string, frequency: Frequency | 'off'): Promise<{ site_id: string; frequency: Frequency | 'off' }> {
  if (frequency === 'off') {
    await db.query('DELETE FROM email_report_subscriptions WHERE user_id = $1 AND site_id = $2', [userId, siteId]);
  } else {
    // A changed frequency starts afresh: its first report is the first period that ends from now on,
    // and the periods of the other frequency are forgotten (a month can begin on a week's Monday).
    await db.query(
      `WITH chosen AS (
         INSERT INTO email_report_subscriptions (id, user_id, site_id, frequency) VALUES ($1, $2, $3, $4)
         ON CONFLICT (user_id, site_id) DO UPDATE SET frequency = EXCLUDED.frequency, created_at = now(), updated_at = now()
          WHERE email_report_subscriptions.frequency <> EXCLUDED.frequency
         RETURNING id)
       DELETE FROM email_report_sends WHERE subscription_id IN (SELECT id FROM chosen)`,
      [randomUUID(), userId, siteId, frequency],
    );
  }
  return { site_id: siteId, frequency };
}

/** What a token's subscription is now (the unsubscribe link opened with GET, which changes nothing). 404 for a token this instance did not sign. */
export async function tokenState(db: MetadataQueryable, key: Uint8Array, token: string): Promise<{ subscribed: boolean; site_domain: string | null; frequency: Frequency | null }> {
  const id = subscriptionOfToken(key, token);
  if (!id) throw notFound('This unsubscribe link is not valid');
  const { rows } = await db.query<{ site_domain: string; frequency: Frequency }>(
    'SELECT s.domain AS site_domain, r.frequency FROM email_report_subscriptions r JOIN sites s ON s.id = r.site_id WHERE r.id = $1',
    [id],
  );
  return rows[0] ? { subscribed: true, ...rows[0] } : { subscribed: false, site_domain: null, frequency: null };
}

/**
 * One-click unsubscribe: deletes the subscription the token names. A token this instance signed
 * always succeeds (a second click, or a subscription already turned off, changes nothing); any
 * other token is 404.
 */
export async function unsubscribeWithToken(db: MetadataQueryable, key: Uint8Array, token: string): Promise<{ status: 'unsubscribed' }> {
  const id = subscriptionOfToken(key, token);
  if (!id) throw notFound('This unsubscribe link is not valid');
  await db.query('DELETE FROM email_report_subscriptions WHERE id = $1', [id]);
  return { status: 'unsubscribed' };
}
