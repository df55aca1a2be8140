// The SQL every /events endpoint reads (lib/analytics/events/scope.ts): which requests look up the
// sessions' visits and which read the events alone, how far around the range visits are looked
// for, and that request values only ever travel as bound parameters.
import { describe, expect, it } from '@jest/globals';
import type { EventQuery } from '../../lib/analytics/events/filters.ts';
import { DIMENSION_SQL, eventScope, VISIT_MARGIN_MS } from '../../lib/analytics/events/scope.ts';

const base: EventQuery = {
  tenant: 'tenant_0123',
  siteId: '11111111-2222-4333-8444-555555555555',
  range: { from: new Date('2026-03-06T05:00:00Z'), to: new Date('2026-03-11T04:00:00Z'), timezone: 'America/New_York' },
  eventName: 'signup',
};
const HOSTILE = "x' OR 1=1 --";

describe('eventScope', () => {
  it('reads the events alone without a filter on a visit’s dimension (names, properties, breakdowns, path)', () => {
    for (const query of [base, { ...base, dimension: { key: 'path', value: '/pricing' } } satisfies EventQuery]) {
      const scope = eventScope(query);
      expect(scope.from).toBe('{db:Identifier}.events');
      expect(scope.params).not.toHaveProperty('visits_from');
    }
  });

  it.each(['referrer', 'device', 'country'] as const)('joins the sessions’ visits to filter on %s, comparing the visit’s value', (key) => {
    const scope = eventScope({ ...base, dimension: { key, value: 'Google' } });
    expect(scope.from).toContain('{db:Identifier}.visits');
    expect(scope.where).toContain(`${DIMENSION_SQL[key]} = {dimension_value:String}`);
    expect(scope.params.dimension_value).toBe('Google');
  });

  it('joins the visits when asked (the audience panels), looking a day beyond each end of the range', () => {
    const scope = eventScope(base, { visits: true });
    expect(scope.from).toMatch(/LEFT ANY JOIN/);
    expect(scope.params.visits_from).toEqual(new Date(base.range.from.getTime() - VISIT_MARGIN_MS));
    expect(scope.params.visits_to).toEqual(new Date(base.range.to.getTime() + VISIT_MARGIN_MS));
  });

  it('looks up only the sessions that pass the event’s own filters, not the dimension filter that needs the visit', () => {
    const scope = eventScope({ ...base, property: { key: 'plan', value: 'pro' }, dimension: { key: 'referrer', value: 'Google' } });
    const lookup = scope.from.slice(scope.from.indexOf('session_id IN'));
    expect(lookup).toContain('name = {event_name:String}');
    expect(lookup).toContain('props[{property_key:String}] = {property_value:String}');
    expect(lookup).not.toContain('dimension_value');
  });

  it('binds every request value; none is written into the SQL', () => {
    const scope = eventScope({ ...base, eventName: HOSTILE, property: { key: HOSTILE, value: HOSTILE }, dimension: { key: 'referrer', value: HOSTILE } });
    expect(`${scope.from} ${scope.where}`).not.toContain(HOSTILE);
    expect([scope.params.event_name, scope.params.property_key, scope.params.property_value, scope.params.dimension_value]).toEqual([HOSTILE, HOSTILE, HOSTILE, HOSTILE]);
  });
});
