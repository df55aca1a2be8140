// Event analytics requests, parsed once: the site and range always, then the event name, a
// property-value filter and an audience-dimension filter. Every endpoint under /events builds on
// this; scope.ts turns a parsed query into SQL.
import { type FieldError, validationFailed } from '../../errors.ts';
import { checkRange, type TimeRange } from '../range.ts';

/** The audience dimensions an event can be filtered and broken down by. */
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
 * a value without its key, has no meaning), and the range is valid in the site's
 * time zone. `needsEvent` is set by the endpoints whose row lists event_name. Every problem is
 * named in one 400.
 */
export function parseEventQuery(input: EventQueryInput, site: EventSite, options: { needsEvent: boolean; now?: Date }): EventQuery {
  const problems: FieldError[] = [];
  const problem = (field: string, message: string, type: string) => problems.push({ field, message: `${field} ${message}`, type });
  if (options.needsEvent && !input.event_name) problem('event_name', 'is required', 'required');
  const range = checkRange(input, site.timezone, problems, options.now);
  if (input.property_value !== undefined && input.property_key === undefined) problem('property_key', 'is required with property_value', 'required');
  if (input.property_key !== undefined && input.property_value === undefined) problem('property_value', 'is required with property_key', 'required');
  if (input.dimension_value !== undefined && input.dimension_key === undefined) problem('dimension_key', 'is required with dimension_value', 'required');
  // The params schema refuses other keys already; this keeps the lib safe on its own.
  if (input.dimension_key !== undefined && !isDimension(input.dimension_key)) problem('dimension_key', `must be one of: ${DIMENSION_KEYS.join(', ')}`, 'enumValue');
  if (input.dimension_key !== undefined && input.dimension_value === undefined) problem('dimension_value', 'is required with dimension_key', 'required');
  if (problems.length > 0 || !range) throw validationFailed(problems);
  const query: EventQuery = { tenant: site.tenant, siteId: site.id, range };
  if (input.event_name) query.eventName = input.event_name;
  if (input.property_key !== undefined) query.property = { key: input.property_key, value: input.property_value! };
  if (input.dimension_key !== undefined) query.dimension = { key: input.dimension_key as DimensionKey, value: input.dimension_value! };
  return query;
}
