// Response schemas of the funnels routes (services/goals.service.ts): published in the OpenAPI
// document and the types the handlers must return.
import { Type } from '@sinclair/typebox';
import { MatchType } from '../goals/responses.ts';
import { DateTime, envelope, object, page, Uuid } from '../openapi/responses.ts';

export const Funnel = object({
  id: Uuid,
  site_id: Uuid,
  name: Type.String(),
  steps: Type.Array(
    object({
      type: MatchType,
      event_name: Type.Optional(Type.String()),
      path_pattern: Type.Optional(Type.String()),
      label: Type.Optional(Type.String()),
    }),
  ),
  window_seconds: Type.Integer({ minimum: 1, description: 'How long after step 1 the last step may come' }),
  created_at: DateTime,
});

export const FunnelPage = page(Funnel);
export const FunnelEnvelope = envelope('funnel', Funnel);

export const FunnelStats = object({
  funnel: object({ id: Uuid, name: Type.String() }),
  steps: Type.Array(
    object({
      index: Type.Integer({ minimum: 1 }),
      label: Type.String(),
      visitors: Type.Integer({ minimum: 0, description: 'Visitors who reached this step after every earlier one, in order, within the window' }),
      dropoff: Type.Integer({ minimum: 0 }),
      conversion_rate: Type.Number({ minimum: 0, description: 'Percent of step 1’s visitors' }),
      step_conversion_rate: Type.Number({ minimum: 0, description: 'Percent of the previous step’s visitors' }),
    }),
  ),
});
