// Response schemas of the stats routes (services/analytics.service.ts): published in the OpenAPI
// document and the types the handlers must return.
import { Type } from '@sinclair/typebox';
import { DateTime, object, pageFields, stringEnum } from '../../openapi/responses.ts';
import { INTERVALS } from './interval.ts';
import { BREAKDOWN_DIMENSIONS } from './plan.ts';

const count = Type.Integer({ minimum: 0 });
const number = Type.Number({ minimum: 0 });

const RangeBounds = { from: DateTime, to: DateTime, timezone: Type.String({ description: 'The site’s IANA time zone, in which days and hours are counted' }) };
const RangeView = object({ ...RangeBounds, interval: stringEnum(INTERVALS) });
const Kpis = {
  visitors: count,
  visits: count,
  pageviews: count,
  views_per_visit: number,
  bounce_rate: Type.Number({ minimum: 0, maximum: 100, description: 'Percent of visits with one pageview and no engagement' }),
  visit_duration: Type.Number({ minimum: 0, description: 'Mean seconds per visit' }),
  engagement_time: Type.Number({ minimum: 0, description: 'Mean engaged seconds per visit' }),
};
const TimeseriesPoint = object({ bucket: DateTime, visitors: count, visits: count, pageviews: count });
const LocalDate = Type.String({ format: 'date' });
const Imported = object(
  {
    included: Type.Boolean({ description: 'Whether figures of imported data are part of this answer' }),
    ranges: Type.Array(object({ from: LocalDate, to: LocalDate }), { description: 'The local days (both ends inclusive) whose figures came from imports' }),
  },
  { description: 'Imported data in this answer: it fills the days of the range without native data, unless with_imported=false or a filter it cannot answer' },
);

export const Stats = object({
  range: RangeView,
  kpis: object({ ...Kpis, live_visitors: count }),
  comparison: Type.Optional(object({ range: RangeView, kpis: object(Kpis), imported: Imported })),
  timeseries: Type.Array(TimeseriesPoint),
  imported: Imported,
});

export const KpisOnly = object({
  range: object(RangeBounds),
  kpis: object(Kpis),
  comparison: Type.Optional(object({ range: object(RangeBounds), kpis: object(Kpis), imported: Imported })),
  imported: Imported,
});

export const Timeseries = object({ range: RangeView, timeseries: Type.Array(TimeseriesPoint), imported: Imported });

export const Breakdown = object({
  dimension: stringEnum(BREAKDOWN_DIMENSIONS),
  rows: Type.Array(
    object({
      value: Type.String(),
      visitors: count,
      visits: count,
      pageviews: count,
      bounce_rate: number,
      visit_duration: number,
      comparison: Type.Optional(object({ visitors: count })),
    }),
  ),
  ...pageFields,
  imported: Imported,
});
