// Response schemas of the event analytics routes (services/events.service.ts): the OpenAPI
// document publishes them and each handler's return type is checked against them.
import { Type } from '@sinclair/typebox';
import { DateTime, eventStream, keyed, object, stringEnum } from '../../openapi/responses.ts';
import { DIMENSION_KEYS } from './filters.ts';
import { INTERVALS } from './timeseries.ts';

const count = (description: string) => Type.Integer({ minimum: 0, description });
const uniqueSessions = count('Distinct sessions that sent the event');
const events = count('Events sent');
const rows = <T extends Parameters<typeof Type.Array>[0]>(row: T) => object({ rows: Type.Array(row) });

export const EventNames = rows(object({ name: Type.String(), unique_sessions: uniqueSessions, events }));
export const EventProperties = rows(object({ key: Type.String(), unique_sessions: uniqueSessions }));
export const EventBreakdown = rows(object({ value: Type.String(), unique_sessions: uniqueSessions, events }));
export const EventTimeseries = object({
  interval: stringEnum(INTERVALS),
  rows: Type.Array(object({ bucket: { ...DateTime, description: 'Start of the bucket in the site’s time zone, as a UTC instant' }, unique_sessions: uniqueSessions, events })),
});
export const EventAudience = keyed(DIMENSION_KEYS, Type.Array(object({ value: Type.String(), unique_sessions: uniqueSessions })), {
  description: 'The top values of each panel by unique sessions',
});
/** `snapshot` events carry lib/analytics/realtime.ts RealtimeSnapshot as JSON. */
export const RealtimeStream = eventStream();
