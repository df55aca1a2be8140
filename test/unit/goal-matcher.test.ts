// Goal matching as ingest and stats apply it: exact and wildcard paths, the LIKE form of a
// pattern, event names with AND-combined property conditions, and the conversion detector
// (first match per visit and goal, stable event ids, bounded memory, cached goals).
import { describe, expect, it } from '@jest/globals';
import { conversionEventId, createConversionDetector } from '../../lib/goals/conversions.ts';
import type { Goal } from '../../lib/goals/goals.ts';
import { compileMatcher, matchesPath, matchesProperties, pathPatternToLike } from '../../lib/goals/matcher.ts';

describe('matchesPath', () => {
  it.each([
    ['/pricing', '/pricing', true],
    ['/pricing', '/pricing/', false],
    ['/pricing', '/Pricing', false],
    ['/pricing', '/pricing/plans', false],
    ['/blog/*', '/blog/', true],
    ['/blog/*', '/blog/hello', true],
    ['/blog/*', '/blog/2024/hello', true],
    ['/blog/*', '/blog', false],
    ['/blog/*', '/blogroll', false],
    ['/*/checkout', '/shop/checkout', true],
    ['/*/checkout', '/a/b/checkout', true],
    ['/*/checkout', '/checkout', false],
    ['/docs/*/intro*', '/docs/v2/introduction', true],
    ['/docs/*/intro*', '/docs/v2/setup', false],
    ['/*', '/', true],
    ['/*', '/anything/at/all', true],
    // Characters that mean something to regular expressions or LIKE are literal.
    ['/a.b', '/axb', false],
    ['/a.b', '/a.b', true],
    ['/c++/*', '/c++/faq', true],
    ['/100%', '/1000', false],
    ['/x_y', '/xzy', false],
    ['/(group)/[id]', '/(group)/[id]', true],
  ])('%s against %s → %s', (pattern, path, expected) => {
    expect(matchesPath(pattern, path)).toBe(expected);
    expect(compileMatcher({ type: 'path', path_pattern: pattern })({ table: 'hits', row: { path } })).toBe(expected);
  });
});

describe('pathPatternToLike', () => {
  it.each([
    ['/pricing', '/pricing'],
    ['/blog/*', '/blog/%'],
    ['/*/checkout/*', '/%/checkout/%'],
    ['/100%_off', '/100\\%\\_off'],
    ['/back\\slash', '/back\\\\slash'],
  ])('%s becomes %s', (pattern, like) => {
    expect(pathPatternToLike(pattern)).toBe(like);
  });
});

describe('matchesProperties', () => {
  it('needs every condition to hold (AND)', () => {
    const conditions = [
      { key: 'plan', value: 'pro' },
      { key: 'period', value: 'yearly' },
    ];
    expect(matchesProperties(conditions, { plan: 'pro', period: 'yearly', extra: 'x' })).toBe(true);
    expect(matchesProperties(conditions, { plan: 'pro', period: 'monthly' })).toBe(false);
    expect(matchesProperties(conditions, { plan: 'pro' })).toBe(false);
  });

  it('compares values as the strings they are stored as, case included', () => {
    expect(matchesProperties([{ key: 'amount', value: '49' }], { amount: 49 })).toBe(true);
    expect(matchesProperties([{ key: 'plan', value: 'Pro' }], { plan: 'pro' })).toBe(false);
  });

  it('treats a missing property as not matching, even against an empty value', () => {
    expect(matchesProperties([{ key: 'coupon', value: '' }], {})).toBe(false);
    expect(matchesProperties([{ key: 'coupon', value: '' }], { coupon: '' })).toBe(true);
  });

  it('passes anything when there are no conditions', () => {
    expect(matchesProperties([], undefined)).toBe(true);
    expect(matchesProperties(undefined, { a: '1' })).toBe(true);
  });
});

describe('compileMatcher', () => {
  const signup = compileMatcher({ type: 'event', event_name: 'Signup', property_conditions: [{ key: 'plan', value: 'pro' }] });

  it('matches an event by exact name and its conditions', () => {
    expect(signup({ table: 'events', row: { name: 'Signup', props: { plan: 'pro' } } })).toBe(true);
    expect(signup({ table: 'events', row: { name: 'signup', props: { plan: 'pro' } } })).toBe(false);
    expect(signup({ table: 'events', row: { name: 'Signup', props: { plan: 'free' } } })).toBe(false);
  });

  it('keeps pageviews and events apart', () => {
    expect(signup({ table: 'hits', row: { path: '/Signup', name: 'Signup', props: { plan: 'pro' } } })).toBe(false);
    const pricing = compileMatcher({ type: 'path', path_pattern: '/pricing' });
    expect(pricing({ table: 'events', row: { path: '/pricing', name: 'Click' } })).toBe(false);
    expect(pricing({ table: 'web_vitals', row: { path: '/pricing' } })).toBe(false);
  });
});

const SITE = '11111111-1111-4111-8111-111111111111';
const goal = (id: string, fields: Partial<Goal>): Goal => ({ id, site_id: SITE, name: id, type: 'path', created_at: '2026-01-01T00:00:00.000Z', ...fields });
const pricingGoal = goal('00000000-0000-4000-8000-000000000001', { name: 'Saw pricing', path_pattern: '/pricing' });
const signupGoal = goal('00000000-0000-4000-8000-000000000002', { name: 'Signed up', type: 'event', event_name: 'Signup', property_conditions: [] });
const hit = (id: string, session: string, path: string) => ({ table: 'hits', row: { site_id: SITE, session_id: session, hit_id: id, path, ts: '2026-03-01T10:00:00.000Z' } });
const event = (id: string, session: string, name: string) => ({ table: 'events', row: { site_id: SITE, session_id: session, event_id: id, name, props: {}, ts: '2026-03-01T10:05:00.000Z' } });

describe('createConversionDetector', () => {
  it('reports the first match per visit and goal, once', async () => {
    const detector = createConversionDetector({ goalsOf: async () => [pricingGoal, signupGoal] });
    const first = await detector.detect([hit('h1', 's1', '/pricing'), hit('h2', 's1', '/pricing'), hit('h3', 's2', '/pricing'), event('e1', 's1', 'Signup')]);
    expect(first).toEqual([
      { event_id: conversionEventId('h1', pricingGoal.id), site_id: SITE, goal_id: pricingGoal.id, goal_name: 'Saw pricing', goal_type: 'path', converted_at: '2026-03-01T10:00:00.000Z' },
      { event_id: conversionEventId('h3', pricingGoal.id), site_id: SITE, goal_id: pricingGoal.id, goal_name: 'Saw pricing', goal_type: 'path', converted_at: '2026-03-01T10:00:00.000Z' },
      { event_id: conversionEventId('e1', signupGoal.id), site_id: SITE, goal_id: signupGoal.id, goal_name: 'Signed up', goal_type: 'event', converted_at: '2026-03-01T10:05:00.000Z' },
    ]);
    // The next batch of the same visits converts nothing new.
    expect(await detector.detect([hit('h4', 's1', '/pricing'), event('e2', 's2', 'Other')])).toEqual([]);
  });

  it('reports nothing for a replayed batch', async () => {
    const detector = createConversionDetector({ goalsOf: async () => [pricingGoal] });
    const batch = [hit('h1', 's1', '/pricing')];
    expect(await detector.detect(batch)).toHaveLength(1);
    expect(await detector.detect(batch)).toEqual([]);
  });

  it('finds conversions again once they are forgotten (they could not be recorded)', async () => {
    const detector = createConversionDetector({ goalsOf: async () => [pricingGoal] });
    const batch = [hit('h1', 's1', '/pricing'), hit('h2', 's2', '/pricing')];
    const found = await detector.detect(batch);
    detector.forget(found);
    expect(await detector.detect(batch)).toEqual(found);
    expect(await detector.detect(batch)).toEqual([]);
  });

  it('gives a replayed row the same event id after a restart (a fresh detector)', async () => {
    const batch = [hit('h1', 's1', '/pricing')];
    const before = await createConversionDetector({ goalsOf: async () => [pricingGoal] }).detect(batch);
    const after = await createConversionDetector({ goalsOf: async () => [pricingGoal] }).detect(batch);
    expect(after[0].event_id).toBe(before[0].event_id);
  });

  it('forgets the least recent visits beyond its bound', async () => {
    const detector = createConversionDetector({ goalsOf: async () => [pricingGoal], maxRemembered: 2 });
    await detector.detect([hit('h1', 's1', '/pricing'), hit('h2', 's2', '/pricing'), hit('h3', 's3', '/pricing')]);
    // s1 was pushed out by s3; s3 is still remembered.
    expect((await detector.detect([hit('h4', 's1', '/pricing')])).map((c) => c.event_id)).toEqual([conversionEventId('h4', pricingGoal.id)]);
    expect(await detector.detect([hit('h5', 's3', '/pricing')])).toEqual([]);
  });

  it('reads the rows of sites with goals only, taking a record’s site from beside its row', async () => {
    const OTHER = '22222222-2222-4222-8222-222222222222';
    const read: string[] = [];
    // A record as the sink hands it over: the site beside the row, the row decoded when read.
    const encoded = (id: string, siteId: string, path: string) => ({
      table: 'hits',
      siteId,
      get row() {
        read.push(id);
        return { site_id: siteId, session_id: id, hit_id: id, path, ts: '2026-03-01T10:00:00.000Z' };
      },
    });
    const detector = createConversionDetector({ goalsOf: async (siteId) => (siteId === SITE ? [pricingGoal] : []) });
    const found = await detector.detect([encoded('h1', OTHER, '/pricing'), encoded('h2', SITE, '/pricing'), encoded('h3', OTHER, '/pricing')]);
    expect(found.map((c) => c.event_id)).toEqual([conversionEventId('h2', pricingGoal.id)]);
    expect(read.filter((id) => id !== 'h2')).toEqual([]);
  });

  it('judges a batch of 10,000 rows a slice at a time, letting the event loop turn in between', async () => {
    const detector = createConversionDetector({ goalsOf: async () => [pricingGoal] });
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const batch = Array.from({ length: 10_000 }, (_, i) => hit(`h${i}`, `s${i}`, i % 2 === 0 ? '/pricing' : '/other'));
    const found = await detector.detect(batch);
    clearInterval(ticker);
    expect(found).toHaveLength(5_000);
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  it('reads a site’s goals once until they are invalidated', async () => {
    let reads = 0;
    let goals = [pricingGoal];
    const detector = createConversionDetector({
      goalsOf: async () => {
        reads++;
        return goals;
      },
    });
    await detector.detect([hit('h1', 's1', '/pricing')]);
    await detector.detect([hit('h2', 's2', '/other')]);
    expect(reads).toBe(1);
    goals = [goal(pricingGoal.id, { name: 'Saw other', path_pattern: '/other' })];
    detector.invalidate(SITE);
    expect((await detector.detect([hit('h3', 's2', '/other')])).map((c) => c.goal_name)).toEqual(['Saw other']);
    expect(reads).toBe(2);
  });
});

describe('conversionEventId', () => {
  it('is a version 5 UUID, stable for a (row, goal) pair and different for another goal or row', () => {
    const id = conversionEventId('9f1c0e4e-3b7a-4c1e-9a43-2b8f6f0d1a77', 'a3b5c7d9-0000-4000-8000-000000000001');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(conversionEventId('9f1c0e4e-3b7a-4c1e-9a43-2b8f6f0d1a77', 'a3b5c7d9-0000-4000-8000-000000000001')).toBe(id);
    expect(conversionEventId('9f1c0e4e-3b7a-4c1e-9a43-2b8f6f0d1a77', 'a3b5c7d9-0000-4000-8000-000000000002')).not.toBe(id);
    expect(conversionEventId('0f1c0e4e-3b7a-4c1e-9a43-2b8f6f0d1a77', 'a3b5c7d9-0000-4000-8000-000000000001')).not.toBe(id);
  });

  it('is the standard UUIDv5 of "<row id>:<goal id>" in Plumb’s conversion namespace 233daefc-fce6-4caf-be1f-a0214e603a22', () => {
    // Expected value from Python: uuid.uuid5(uuid.UUID('233daefc-…'), '9f1c…1a77:a3b5…0001').
    expect(conversionEventId('9f1c0e4e-3b7a-4c1e-9a43-2b8f6f0d1a77', 'a3b5c7d9-0000-4000-8000-000000000001')).toBe('352ecc66-684e-5a93-8e17-59fe24ad196e');
  });
});
