// The dashboard's only way to the server: same-origin JSON calls to /api/*. A 401 on a signed-in
// call means the session ended; the session layer listens for that and shows the login screen.
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fields: { field: string; message: string }[];
  constructor(status: number, code: string, message: string, fields: { field: string; message: string }[] = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}

type Unauthorized = () => void;
let onUnauthorized: Unauthorized | null = null;

/** The session layer registers here; calls made with `session: true` report a 401 to it. */
export function setUnauthorizedHandler(handler: Unauthorized | null) {
  onUnauthorized = handler;
}

export type Query = Record<string, string | number | undefined | null | readonly string[]>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const v of value) params.append(key, v);
    else params.append(key, String(value));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  body?: unknown;
  query?: Query;
  /** A 401 here means the signed-in session is gone (default true); login calls pass false. */
  session?: boolean;
  signal?: AbortSignal;
}

export async function api<T>(path: string, options: CallOptions = {}): Promise<T> {
  const { method = 'GET', body, query, session = true, signal } = options;
  const res = await fetch(withQuery(path, query), {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? { Accept: 'application/json' } : { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const json = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : {};
  if (!res.ok) {
    if (res.status === 401 && session && json.code !== 'password_required') onUnauthorized?.();
    throw new ApiError(res.status, json.code ?? 'error', json.message ?? `Request failed (${res.status})`, json.fields ?? []);
  }
  return json as T;
}

/** The message to show for a failed call, with the fields the server named. */
export function problem(err: unknown): string {
  if (err instanceof ApiError) {
    const fields = err.fields.map((f) => `${f.field} ${f.message}`).join('; ');
    return fields ? `${err.message}: ${fields}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export interface User {
  id: string;
  email: string;
  role: 'owner' | 'admin' | 'user';
}

export interface SessionInfo {
  issued_at: string;
  expires_at: string;
  duration_seconds: number;
  warning_seconds: number;
  remembered: boolean;
  remember_expires_at: string | null;
  remember_me_duration_days: number;
}

export interface SignedIn {
  status: 'ok';
  user: User;
  session: SessionInfo;
}

export interface MfaRequired {
  status: 'mfa_required';
  challenge_token: string;
  factors: ('totp' | 'recovery_code')[];
}

export interface Site {
  id: string;
  team_id: string;
  domain: string;
  timezone: string;
  hostnames: string[];
  created_at: string;
  role: 'owner' | 'admin' | 'editor' | 'viewer';
}

export interface Team {
  id: string;
  name: string;
  role: 'owner' | 'admin' | 'member';
  created_at: string;
  archived_at: string | null;
}

export interface Kpis {
  visitors: number;
  visits: number;
  pageviews: number;
  views_per_visit: number;
  bounce_rate: number;
  visit_duration: number;
  engagement_time: number;
}

export interface RangeView {
  from: string;
  to: string;
  timezone: string;
  interval: 'hour' | 'day' | 'week' | 'month';
}

export interface TimeseriesPoint {
  bucket: string;
  visitors: number;
  visits: number;
  pageviews: number;
}

export interface StatsResponse {
  range: RangeView;
  kpis: Kpis & { live_visitors: number };
  comparison?: { range: RangeView; kpis: Kpis };
  timeseries: TimeseriesPoint[];
}

export interface BreakdownRow {
  value: string;
  visitors: number;
  visits: number;
  pageviews: number;
  bounce_rate: number;
  visit_duration: number;
}

export interface BreakdownResponse {
  rows: BreakdownRow[];
  total: number;
  has_more: boolean;
}

export interface Goal {
  id: string;
  site_id: string;
  name: string;
  type: 'event' | 'path';
  event_name?: string;
  path_pattern?: string;
  property_conditions?: { key: string; value: string }[];
  revenue?: { currency: string };
}

export interface GoalStatsRow {
  goal_id: string;
  name: string;
  type: string;
  conversions: number;
  events: number;
  conversion_rate: number;
}

export interface FunnelStep {
  type: 'event' | 'path';
  event_name?: string;
  path_pattern?: string;
  label?: string;
}

export interface Funnel {
  id: string;
  name: string;
  steps: FunnelStep[];
  window_seconds: number;
}

export interface FunnelStepStats {
  index: number;
  label: string;
  visitors: number;
  dropoff: number;
  conversion_rate: number;
  step_conversion_rate: number;
}
