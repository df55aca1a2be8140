// What each ingest route accepts, as fastest-validator schemas: the actions declare them (so the
// gateway validates and OpenAPI documents them) and batch items are checked one by one with them.
// Formats (URLs, IPs, timestamps, names, properties) are checked by the rules of ./fields.ts.
import { batchItemType, eventName, eventProperties, httpUrl, ipAddress, plainText, referrerUrl, requestPath, timestamp } from './fields.ts';

const width = { type: 'number', integer: true, min: 0, max: 100_000, optional: true };

export const TRACKER_PAGEVIEW = {
  url: httpUrl(),
  referrer: referrerUrl(),
  width,
};

export const TRACKER_EVENT = {
  ...TRACKER_PAGEVIEW,
  name: eventName({ engagement: true }),
  props: eventProperties(),
  engagement_ms: { type: 'number', integer: true, min: 0, max: 86_400_000, optional: true },
};

export const WEB_VITAL_METRICS = ['LCP', 'INP', 'CLS', 'FCP', 'TTFB'] as const;

export const TRACKER_WEB_VITAL = {
  url: httpUrl(),
  metric: { type: 'enum', values: WEB_VITAL_METRICS },
  value: { type: 'number', min: 0, max: 3_600_000 },
  rating: { type: 'enum', values: ['good', 'needs-improvement', 'poor'], optional: true },
  width,
};

export const SERVER_PAGEVIEW = {
  url: httpUrl(),
  timestamp: timestamp(),
  visitor_ip: ipAddress(),
  user_agent: plainText(1024, { min: 1 }),
  referrer: referrerUrl(),
  session_id: plainText(128, { min: 1, optional: true }),
  width,
};

export const SERVER_EVENT = { ...SERVER_PAGEVIEW, name: eventName({ engagement: false }), properties: eventProperties() };

export const SERVER_BATCH_ITEM = { type: batchItemType(), ...SERVER_EVENT, name: eventName({ engagement: false, optional: true }) };

export const MAX_BATCH_ITEMS = 1000;

export const AI_FETCH = {
  path: requestPath(),
  url: httpUrl({ optional: true }),
  status_code: { type: 'number', integer: true, min: 100, max: 599 },
  content_type: plainText(256, { optional: true }),
  response_time_ms: { type: 'number', integer: true, min: 0, max: 3_600_000, optional: true },
  bytes: { type: 'number', integer: true, min: 0, max: Number.MAX_SAFE_INTEGER, optional: true },
  user_agent: plainText(1024, { min: 1 }),
  timestamp: timestamp({ optional: true }),
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
