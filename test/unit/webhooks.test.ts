// Webhook building blocks: the signature and envelope against values worked out independently
// (openssl) from the documented format, the backoff schedule, and the catalog turning each service's internal
// payload into the documented `data` of its type.
import { describe, expect, it } from '@jest/globals';
import { catalogFor, subscriptionProblem, toOperationalEvent } from '../../lib/webhooks/catalog.ts';
import { retryDelaySeconds } from '../../lib/outbox/send-loop.ts';
import { deliveryHeaders, envelopeBody, newSigningSecret, signature } from '../../lib/webhooks/signing.ts';

describe('signature', () => {
  // printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'whsec_test'
  it('is v1= and the hex HMAC-SHA256 of "timestamp.body" keyed with the secret', () => {
    expect(signature('whsec_test', 1700000000, '{"a":1}')).toBe('v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789');
    expect(signature('whsec_other', 1700000001, '{"api_version":"2.11"}')).toBe('v1=e98f1f41306d2f239b80a6639b6a4c07973a1160bd32d5794cebb93388ee9fc1');
  });

  it('puts every documented header on a delivery, with the brand in their names', () => {
    expect(deliveryHeaders('whsec_test', '{"a":1}', { eventId: 'e', deliveryId: 'd' }, 1700000000)).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'Plumb-Webhook/2.11',
      'X-Plumb-Timestamp': '1700000000',
      'X-Plumb-Signature': 'v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789',
      'X-Plumb-Event-ID': 'e',
      'X-Plumb-Delivery-ID': 'd',
    });
  });

  it('makes secrets of 32 random bytes, never the same twice', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(a);
  });
});

describe('envelope', () => {
  it('serialises api_version, id, delivery_id, type, created_at, data in that order', () => {
    const body = envelopeBody({ id: 'e1', type: 'site.updated', createdAt: '2026-11-21T17:00:00.000Z', data: { site_id: 's', domain: 'x.example', team_id: 't' } }, 'd1');
    expect(body).toBe(
      '{"api_version":"2.11","id":"e1","delivery_id":"d1","type":"site.updated","created_at":"2026-11-21T17:00:00.000Z","data":{"site_id":"s","domain":"x.example","team_id":"t"}}',
    );
  });
});

describe('retry delays', () => {
  it('start at the base and double per failed attempt, up to the maximum', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelaySeconds(n, 30, 21600, 0))).toEqual([30, 60, 120, 240, 480, 960]);
    expect([9, 10, 11, 40].map((n) => retryDelaySeconds(n, 30, 21600, 0))).toEqual([7680, 15360, 21600, 21600]);
  });

  it('take up to 20% off at random, never adding to the delay', () => {
    expect(retryDelaySeconds(1, 30, 21600, 0.5)).toBe(27);
    expect(retryDelaySeconds(3, 30, 21600, 0.999999)).toBeCloseTo(96, 3);
    expect(retryDelaySeconds(20, 30, 21600, 0.25)).toBe(20520);
  });
});

describe('catalog', () => {
  it('lets site webhooks subscribe to site events only, instance webhooks to everything', () => {
    expect(catalogFor('site')).toHaveLength(9);
    expect(catalogFor('instance')).toHaveLength(17);
    expect(subscriptionProblem('site', 'goal.converted')).toBeNull();
    expect(subscriptionProblem('instance', 'goal.converted')).toBeNull();
    expect(subscriptionProblem('instance', 'team.archived')).toBeNull();
    expect(subscriptionProblem('site', 'team.archived')).toBe('"team.archived" is an instance event; only instance webhooks may subscribe to it');
    expect(subscriptionProblem('instance', 'site.exploded')).toBe('"site.exploded" is not an event type (GET …/webhooks/events lists them)');
  });

  // The payloads as the services emit them (services/*.service.ts `ctx.emit('ops.…')`).
  it.each([
    ['site.created', { site_id: 's1', domain: 'a.example', team_id: 't1' }, null, { site_id: 's1', domain: 'a.example', team_id: 't1' }],
    ['site.updated', { site_id: 's1', domain: 'a.example', team_id: 't1' }, 's1', { site_id: 's1', domain: 'a.example', team_id: 't1' }],
    ['site.deleted', { site_id: 's1', domain: 'a.example', team_id: 't1' }, 's1', { site_id: 's1', domain: 'a.example', team_id: 't1' }],
    ['goal.created', { site_id: 's1', goal_id: 'g1', name: 'Signup', type: 'event' }, 's1', { site_id: 's1', goal_id: 'g1', goal_name: 'Signup', goal_type: 'event' }],
    ['goal.deleted', { site_id: 's1', goal_id: 'g1', name: 'Blog', type: 'path' }, 's1', { site_id: 's1', goal_id: 'g1', goal_name: 'Blog', goal_type: 'path' }],
    [
      'goal.converted',
      { site_id: 's1', goal_id: 'g1', goal_name: 'Signup', goal_type: 'event', converted_at: '2026-11-21T10:00:00.000Z' },
      's1',
      { site_id: 's1', goal_id: 'g1', goal_name: 'Signup', goal_type: 'event', converted_at: '2026-11-21T10:00:00.000Z' },
    ],
    ['system.user.updated', { user_id: 'u1', email: 'a@example.com', role: 'admin' }, null, { user_id: 'u1', email: 'a@example.com', role: 'admin' }],
    ['system.user.deleted', { user_id: 'u1', email: 'a@example.com', role: 'user' }, null, { user_id: 'u1', email: 'a@example.com', role: 'user' }],
    ['team.created', { team_id: 't1', name: 'Growth', user_id: 'u1', email: 'a@example.com', role: 'owner' }, null, { team_id: 't1', name: 'Growth', owner_user_id: 'u1', owner_email: 'a@example.com' }],
    ['team.updated', { team_id: 't1', name: 'Growth' }, null, { team_id: 't1', name: 'Growth' }],
    ['team.archived', { team_id: 't1', name: 'Growth', archived_at: '2026-11-21T10:00:00.000Z' }, null, { team_id: 't1', name: 'Growth', archived_at: '2026-11-21T10:00:00.000Z' }],
    ['team.member.added', { team_id: 't1', user_id: 'u2', email: 'b@example.com', role: 'member' }, null, { team_id: 't1', user_id: 'u2', email: 'b@example.com', role: 'member' }],
    ['team.member.removed', { team_id: 't1', user_id: 'u2', email: 'b@example.com', role: 'admin' }, null, { team_id: 't1', user_id: 'u2', email: 'b@example.com', role: 'admin' }],
  ])('%s: data has exactly the documented fields, and the event belongs to site %s', (type, payload, siteId, data) => {
    const event = toOperationalEvent(type, payload)!;
    expect(event).toEqual({ type, siteId, data });
    expect(Object.keys(event.data)).toEqual(Object.keys(data));
  });

  it('ignores internal events that are not in the catalog, and drops fields the catalog does not list', () => {
    expect(toOperationalEvent('site.member.updated', { site_id: 's1' })).toBeNull();
    expect(toOperationalEvent('team.updated', { team_id: 't1', name: 'x', secret_note: 'no' })?.data).toEqual({ team_id: 't1', name: 'x' });
    expect(toOperationalEvent('team.updated', { team_id: 't1' })?.data).toEqual({ team_id: 't1', name: null });
  });
});
