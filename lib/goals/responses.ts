// Response schemas of the goals routes (services/goals.service.ts): published in the OpenAPI
// document and the types the handlers must return.
import { Type } from '@sinclair/typebox';
import { DateTime, envelope, object, page, stringEnum, Uuid } from '../openapi/responses.ts';

export const MatchType = stringEnum(['event', 'path']);

export const Goal = object({
  id: Uuid,
  site_id: Uuid,
  name: Type.String(),
  type: MatchType,
  event_name: Type.Optional(Type.String({ description: 'Event goals only' })),
  property_conditions: Type.Optional(Type.Array(object({ key: Type.String(), value: Type.String() }), { description: 'Event goals only; every condition must hold' })),
  path_pattern: Type.Optional(Type.String({ description: 'Path goals only: an exact path or a wildcard such as /blog/*' })),
  revenue: Type.Optional(object({ currency: Type.String({ description: 'ISO 4217 code' }) })),
  created_at: DateTime,
});

export const GoalPage = page(Goal);
export const GoalEnvelope = envelope('goal', Goal);

export const GoalStats = object({
  rows: Type.Array(
    object({
      goal_id: Uuid,
      name: Type.String(),
      type: MatchType,
      conversions: Type.Integer({ minimum: 0, description: 'Unique visitors with at least one matching hit or event in the range' }),
      events: Type.Integer({ minimum: 0, description: 'Matching hits (path goals) or events (event goals)' }),
      conversion_rate: Type.Number({ minimum: 0, description: 'Conversions as a percentage of the range’s visitors, one decimal' }),
      revenue: Type.Optional(object({ currency: Type.String(), total: Type.Number() })),
    }),
  ),
});
