// The dashboard's only way to the server: same-origin JSON calls to /api/*. A 401 on a signed-in
// call means the session ended; the session layer listens for that and shows the login screen.
// The answers' shapes are the server's own types (type-only imports: erased from the bundle, so
// no server code reaches the browser). They already carry dates as RFC 3339 strings.
import type { Audience, AudienceRow } from '../../lib/analytics/events/audience.ts';
import type { BreakdownRow as EventBreakdownRow } from '../../lib/analytics/events/breakdown.ts';
import type { DimensionKey as EventDimension } from '../../lib/analytics/events/filters.ts';
import type { EventNameRow } from '../../lib/analytics/events/names.ts';
import type { PropertyKeyRow } from '../../lib/analytics/events/properties.ts';
import type { Timeseries as EventTimeseries } from '../../lib/analytics/events/timeseries.ts';
import type { BreakdownResponse, BreakdownRow, Kpis, KpisResponse, RangeView, StatsResponse, TimeseriesPoint } from '../../lib/analytics/query/stats.ts';
import type { RealtimeSnapshot } from '../../lib/analytics/realtime.ts';
import type { AiFetchPages, AiFetchReport, AiFetchTimeseries } from '../../lib/analytics/ai-fetches.ts';
import type { ApiClientView } from '../../lib/auth/api-clients.ts';
import type { PasskeyView } from '../../lib/auth/passkeys.ts';
import type { UserPrincipal } from '../../lib/auth/sessions.ts';
import type { AuditEntry } from '../../lib/audit/audit.ts';
import type { SessionView, signedInView } from '../../lib/auth/session-view.ts';
import type { FunnelStepStats } from '../../lib/funnels/stats.ts';
import type { Funnel, FunnelStep } from '../../lib/funnels/funnels.ts';
import type { GoalStatsRow } from '../../lib/goals/conversions.ts';
import type { ImportManifest } from '../../lib/imports/source.ts';
import type { Goal } from '../../lib/goals/goals.ts';
import type { Page } from '../../lib/pagination.ts';
import type { SiteMember } from '../../lib/sites/members.ts';
import type { SiteView } from '../../lib/sites/sites-admin.ts';
import type { ShareView } from '../../lib/share/links.ts';
import type { OpenInvitation } from '../../lib/teams/invitations.ts';
import type { Member as TeamMember } from '../../lib/teams/members.ts';
import type { Team } from '../../lib/teams/teams.ts';
import type { SystemStatus } from '../../lib/system/system.ts';
import type { UserView } from '../../lib/users/admin.ts';
import type { ImportView, listImporters } from '../../lib/imports/imports.ts';
import type { ImportState } from '../../lib/imports/responses.ts';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fields: { field: string; message: string }[];
  /** What the server adds to some errors (a refused upload chunk says how many bytes it holds). */
  readonly details: Record<string, unknown>;
  constructor(status: number, code: string, message: string, fields: { field: string; message: string }[] = [], details: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
    this.details = details;
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
  return answer<T>(res, session);
}

async function answer<T>(res: Response, session: boolean): Promise<T> {
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const json = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : {};
  if (!res.ok) {
    if (res.status === 401 && session && json.code !== 'password_required') onUnauthorized?.();
    throw new ApiError(res.status, json.code ?? 'error', json.message ?? `Request failed (${res.status})`, json.fields ?? [], json.details ?? {});
  }
  return json as T;
}

/** A PUT of raw bytes (a piece of an uploaded file), answered with JSON like any call. */
export async function putBytes<T>(path: string, bytes: Blob, options: { query?: Query; signal?: AbortSignal } = {}): Promise<T> {
  const res = await fetch(withQuery(path, options.query), {
    method: 'PUT',
    credentials: 'same-origin',
    headers: { Accept: 'application/json', 'Content-Type': 'application/octet-stream' },
    body: bytes,
    signal: options.signal,
  });
  return answer<T>(res, true);
}

/** A field's message as said apart from its field: with the field's name, which the server may already have put first. */
export const namedMessage = (field: string, message: string) => (message.startsWith(`${field} `) ? message : `${field} ${message}`);

/** A field's message as said under that field: without the field's name in front. */
export const fieldMessage = (field: string, message: string) => (message.startsWith(`${field} `) ? message.slice(field.length + 1) : message);

/** The message to show for a failed call, with the fields the server named. */
export function problem(err: unknown): string {
  if (err instanceof ApiError) {
    const fields = err.fields.map((f) => namedMessage(f.field, f.message)).join('; ');
    return fields ? `${err.message}: ${fields}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

export type {
  AiFetchPages,
  AiFetchReport,
  AiFetchTimeseries,
  ApiClientView,
  Audience,
  AudienceRow,
  AuditEntry,
  BreakdownResponse,
  BreakdownRow,
  EventBreakdownRow,
  EventDimension,
  EventNameRow,
  EventTimeseries,
  Funnel,
  FunnelStep,
  FunnelStepStats,
  Goal,
  GoalStatsRow,
  Kpis,
  KpisResponse,
  OpenInvitation,
  Page,
  PasskeyView,
  PropertyKeyRow,
  RangeView,
  RealtimeSnapshot,
  SessionView,
  ShareView,
  SiteMember,
  StatsResponse,
  SystemStatus,
  Team,
  TeamMember,
  TimeseriesPoint,
};
export type User = UserPrincipal;
export type Site = SiteView;
/** An account as the instance's user admin lists it. */
export type InstanceUser = UserView;
/** The answer to a completed sign-in (login, MFA, passkey, setup, accepted invite). */
export type SignedIn = ReturnType<typeof signedInView>;
/** GET /api/auth/session and its extend: the person and the session, side by side. */
export type SessionAnswer = { user: User } & SessionView;

/** GET /api/sites/{id}/stats as it may answer: with the days whose figures came from imports (absent on servers without imports). */
export type DashboardStats = StatsResponse & { imported?: { included: boolean; ranges: { from: string; to: string }[] } };

/** A tool whose files an import reads (GET /api/sites/{id}/importers). */
export type Importer = ReturnType<typeof listImporters>['importers'][number];
/** An import of another tool's data into a site (GET /api/sites/{id}/imports/{importId}). */
export type Import = ImportView;
export type ImportFile = ImportView['files'][number];
export type { ImportState };

export type { ImportManifest };

export interface MfaRequired {
  status: 'mfa_required';
  challenge_token: string;
  factors: ('totp' | 'recovery_code')[];
}
