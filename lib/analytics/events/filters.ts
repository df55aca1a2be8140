// Event analytics requests, parsed once: the site and range always, then the event name, a
// property-value filter and an audience-dimension filter. Every endpoint under /events builds on
// this; scope.ts turns a parsed query into SQL.
import { badRequest } from '../../errors.ts';
import { parseRange, type TimeRange } from '../range.ts';

/** The audience dimensions, exactly the spec's list. */
export const DIMENSION_KEYS = ['path', 'referrer', 'device', 'country'] as const;
export type DimensionKey = (typeof DIMENSION_KEYS)[number];

/** Query parameters as the gateway hands them over (strings, all optional here). */
export interface EventQueryInput {
  from?: string;
  to?: string;
  event_name?: string;
  property_key?: string;
  property_value?: string;
  dimension_key?: string;
  dimension_value?: string;
}

/** The site a query reads: its tenant database and time zone. */
export interface EventSite {
  id: string;
  tenant: string;
  timezone: string;
}

export interface EventQuery {
  tenant: string;
  siteId: string;
  range: TimeRange;
  eventName?: string;
  property?: { key: string; value: string };
  dimension?: { key: DimensionKey; value: string };
}

const isDimension = (value: string): value is DimensionKey => (DIMENSION_KEYS as readonly string[]).includes(value);

/**
 * Checks what the params schema cannot: filter halves come in pairs (a key without its value, or
 * a value without its key, has no meaning the spec gives), and the range is valid in the site's
 * time zone. `needsEvent` is set by the endpoints whose row lists event_name.
 */
export function parseEventQuery(input: EventQueryInput, site: EventSite, options: { needsEvent: boolean; now?: Date }): EventQuery {
  if (options.needsEvent && !input.event_name) throw badRequest('event_name is required');
  const query: EventQuery = { tenant: site.tenant, siteId: site.id, range: parseRange(input, site.timezone, options.now) };
  if (input.event_name) query.eventName = input.event_name;
  if (input.property_value !== undefined && input.property_key === undefined) throw badRequest('property_value needs property_key');
  if (input.property_key !== undefined) {
    if (input.property_value === undefined) throw badRequest('property_key needs property_value');
    query.property = { key: input.property_key, value: input.property_value };
  }
  if (input.dimension_value !== undefined && input.dimension_key === undefined) throw badRequest('dimension_value needs dimension_key');
  if (input.dimension_key !== undefined) {
    // The params schema refuses other keys already; this keeps the lib safe on its own.
    if (!isDimension(input.dimension_key)) throw badRequest(`dimension_key must be one of ${DIMENSION_KEYS.join(', ')}`);
    if (input.dimension_value === undefined) throw badRequest('dimension_key needs dimension_value');
    query.dimension = { key: input.dimension_key, value: input.dimension_value };
  }
  return query;
}
