// What each ingest route accepts, as fastest-validator schemas: the actions declare them (so the
// gateway validates and OpenAPI documents them) and batch items are checked one by one with them.

const url = { type: 'string', min: 1, max: 2048 };
const optionalText = (max: number) => ({ type: 'string', max, optional: true });
const props = {
  type: 'record',
  optional: true,
  key: { type: 'string', min: 1, max: 64 },
  value: { type: 'multi', rules: [{ type: 'string', max: 256 }, { type: 'number' }, { type: 'boolean' }] },
};
const eventName = { type: 'string', min: 1, max: 120 };

export const TRACKER_PAGEVIEW = {
  url,
  referrer: optionalText(2048),
  width: { type: 'number', integer: true, min: 0, max: 100_000, optional: true },
};

export const TRACKER_EVENT = {
  ...TRACKER_PAGEVIEW,
  name: eventName,
  props,
  engagement_ms: { type: 'number', integer: true, min: 0, max: 86_400_000, optional: true },
};

export const WEB_VITAL_METRICS = ['LCP', 'INP', 'CLS', 'FCP', 'TTFB'] as const;

export const TRACKER_WEB_VITAL = {
  url,
  metric: { type: 'enum', values: WEB_VITAL_METRICS },
  value: { type: 'number', min: 0, max: 3_600_000 },
  rating: { type: 'enum', values: ['good', 'needs-improvement', 'poor'], optional: true },
  width: { type: 'number', integer: true, min: 0, max: 100_000, optional: true },
};

const timestamp = { type: 'string', min: 20, max: 40, description: 'RFC 3339 date-time, e.g. 2026-11-21T10:00:00Z' };

export const SERVER_PAGEVIEW = {
  url,
  timestamp,
  visitor_ip: { type: 'string', min: 2, max: 64 },
  user_agent: { type: 'string', min: 1, max: 1024 },
  referrer: optionalText(2048),
  session_id: optionalText(128),
  width: { type: 'number', integer: true, min: 0, max: 100_000, optional: true },
};

export const SERVER_EVENT = { ...SERVER_PAGEVIEW, name: eventName, properties: props };

export const SERVER_BATCH_ITEM = { type: { type: 'enum', values: ['pageview', 'event'] }, ...SERVER_EVENT, name: { ...eventName, optional: true } };

export const MAX_BATCH_ITEMS = 1000;

export const AI_FETCH = {
  path: { type: 'string', min: 1, max: 2048, optional: true },
  url: { type: 'string', min: 1, max: 2048, optional: true },
  status_code: { type: 'number', integer: true, min: 100, max: 599 },
  content_type: optionalText(256),
  response_time_ms: { type: 'number', integer: true, min: 0, max: 3_600_000, optional: true },
  bytes: { type: 'number', integer: true, min: 0, max: Number.MAX_SAFE_INTEGER, optional: true },
  user_agent: { type: 'string', min: 1, max: 1024 },
  timestamp: { ...timestamp, optional: true },
};

export type TrackerPageview = { url: string; referrer?: string; width?: number };
export type TrackerEvent = TrackerPageview & { name: string; props?: Record<string, string | number | boolean>; engagement_ms?: number };
export type TrackerWebVital = { url: string; metric: (typeof WEB_VITAL_METRICS)[number]; value: number; rating?: string; width?: number };
export type ServerPageview = { url: string; timestamp: string; visitor_ip: string; user_agent: string; referrer?: string; session_id?: string; width?: number };
export type ServerEvent = ServerPageview & { name: string; properties?: Record<string, string | number | boolean> };
export type ServerBatchItem = (ServerPageview & { type: 'pageview' }) | (ServerEvent & { type: 'event' });
export type AiFetch = {
  path?: string;
  url?: string;
  status_code: number;
  content_type?: string;
  response_time_ms?: number;
  bytes?: number;
  user_agent: string;
  timestamp?: string;
};
