// Who may call what, for every route the node serves × every role, from one table. A route the
// node serves without an entry here fails the test, so a new route cannot ship unexamined.
//
// "allowed" means the request passes authentication and authorisation: any status but 401, 403
// and 404 (the body may still be refused with 400/409). "denied" means 401, 403 or 404. Public
// routes must answer every role alike: credentials change nothing there.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFunnel } from '../../lib/funnels/funnels.ts';
import { createGoal } from '../../lib/goals/goals.ts';
import { createImport } from '../../lib/imports/imports.ts';
import { createShareLink } from '../../lib/share/links.ts';
import { createWebhook, type WebhookOwner, webhookSecretBox } from '../../lib/webhooks/webhooks.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { buildFixture, type Fixture, ROLES, type Role } from '../support/permission-fixture.ts';

type Allow = readonly Role[] | 'everyone';

interface Entry {
  allow: Allow;
  /** Request body; the default is {} for POST/PUT/PATCH. */
  body?: (fx: Fixture) => unknown;
  /** Path parameters (a fresh target per role where the route changes it); `:id` defaults to the fixture site. */
  params?: (fx: Fixture) => Record<string, string> | Promise<Record<string, string>>;
  /** Acts destructively on its target: each role gets a fresh site to act on. */
  freshSite?: boolean;
  /** The caller's own resource by id: an allowed caller gets 404 for an id that is not theirs. */
  ownResource?: boolean;
  /** Query string the route needs to get past validation. */
  query?: string;
  /** A never-ending response (Server-Sent Events): only the status is read, then the request is aborted. */
  stream?: boolean;
  /** Ends the session it is called with: each role calls it on a session of its own. */
  freshSession?: boolean;
  /** The body is these bytes, sent as application/octet-stream, instead of JSON. */
  bytes?: () => Uint8Array<ArrayBuffer>;
  /** Further request headers the route needs (never credentials: those come from the role). */
  headers?: Record<string, string>;
}

const SIGNED_IN: Role[] = ['instance-owner', 'instance-admin', 'instance-user', 'site-owner', 'site-admin', 'site-editor', 'site-viewer'];
const SCOPED_CLIENT: Role[] = ['client-scoped'];
const INSTANCE_ADMINS: Role[] = ['instance-owner', 'instance-admin'];
const SITE_READERS: Role[] = ['instance-owner', 'instance-admin', 'site-owner', 'site-admin', 'site-editor', 'site-viewer'];
const SITE_ADMINS: Role[] = ['instance-owner', 'instance-admin', 'site-owner', 'site-admin'];
const NOBODY_ID = '00000000-0000-4000-8000-00000000abcd';
let unique = 0;
const fresh = (what: string) => `${what}-${++unique}-${Date.now()}`;
const EDITORS: Role[] = ['instance-owner', 'instance-admin', 'site-owner', 'site-admin', 'site-editor'];
const steps = [
  { type: 'path' as const, path_pattern: '/a' },
  { type: 'path' as const, path_pattern: '/b' },
];
/** A new team already connected to single sign-on, for the route that disconnects it. */
const freshSsoTeam = async (fx: Fixture) => {
  const id = await fx.freshTeam();
  await fx.t.node.runtime.metadata().query("INSERT INTO team_sso (team_id, issuer, client_id, client_secret) VALUES ($1, 'https://idp.example', 'matrix', 'v1.sealed')", [id]);
  return id;
};
const freshGoal = async (fx: Fixture) => ({
  goalId: (await createGoal(fx.t.node.runtime.metadata(), fx.people['site-owner']!, fx.siteId, { name: fresh('goal'), type: 'path', path_pattern: '/m' })).id,
});
const freshFunnel = async (fx: Fixture) => ({
  funnelId: (await createFunnel(fx.t.node.runtime.metadata(), fx.people['site-owner']!, fx.siteId, { name: fresh('funnel'), steps })).id,
});

// Imports of the matrix are never validated: they stay pending, and nothing runs.
const importBytes = new TextEncoder().encode('2Path,Event,Session,Bot,Date\n');
const importBody = { source: 'goatcounter' as const, files: [{ name: 'matrix.csv', size: importBytes.length, sha256: createHash('sha256').update(importBytes).digest('hex') }] };
const freshImport = async (fx: Fixture) => ({
  importId: (await createImport(fx.t.node.runtime.metadata(), fx.people['site-owner']!, fx.t.site, importBody, { maxFileBytes: 1024 })).id,
});

const freshFailedBackup = async (fx: Fixture) => {
  const backupId = `2000-01-01T00-00-00Z-${(++unique).toString(16).padStart(8, '0')}`;
  await fx.t.node.runtime.metadata().query("INSERT INTO plugin_archives.backups (id, status, location, error) VALUES ($1, 'failed', 'matrix', 'matrix')", [backupId]);
  return { backupId };
};

const freshAiRun = async (fx: Fixture) => {
  const runId = crypto.randomUUID();
  await fx.t.node.runtime.metadata().query(
    `INSERT INTO plugin_ai.runs (id, site_id, feature, provider, model, range_from, range_to, status, error_category)
     VALUES ($1, $2, 'opportunities', 'openai-compatible', 'matrix', '2026-03-01', '2026-03-07', 'failed', 'provider_error')`,
    [runId, fx.siteId],
  );
  return { runId };
};
const freshOpportunity = async (fx: Fixture) => {
  const { runId } = await freshAiRun(fx);
  const opportunityId = crypto.randomUUID();
  await fx.t.node.runtime.metadata().query(
    `INSERT INTO plugin_ai.opportunities (id, site_id, run_id, kind, message_key, params, evidence, rank)
     VALUES ($1, $2, $3, 'high_exit_entry_page', 'ai.high_exit_entry_page.short', '{"path": "/m", "exit_percent": 80}', '[]', 0)`,
    [opportunityId, fx.siteId, runId],
  );
  return { opportunityId };
};

const freshNote = async (fx: Fixture) => {
  const noteId = crypto.randomUUID();
  await fx.t.node.runtime.metadata().query("INSERT INTO plugin_notes.notes (id, site_id, text) VALUES ($1, $2, 'matrix')", [noteId, fx.siteId]);
  return { noteId };
};

// Webhooks of the matrix point at a public IP literal (no DNS) and stay disabled, so no delivery
// ever leaves the machine ('Send test' answers 409 for them: allowed, yet nothing is queued).
const hookBody = () => ({ name: fresh('hook'), url: 'https://93.184.215.14/hook', events: ['import.completed'], enabled: false });
const freshWebhook = (owner: (fx: Fixture) => WebhookOwner) => async (fx: Fixture) => {
  const runtime = fx.t.node.runtime;
  const deps = { store: runtime.metadata(), secrets: webhookSecretBox(runtime.jwtSecret), policy: { allowDevelopmentTargets: false } };
  return { webhookId: (await createWebhook(deps, fx.people['instance-owner']!, owner(fx), hookBody())).webhook.id };
};
const freshInstanceWebhook = freshWebhook(() => ({ scope: 'instance' }));
const freshSiteWebhook = freshWebhook((fx) => ({ scope: 'site', siteId: fx.siteId }));
/** Routes that leave their webhook in place share one per owner (an owner may have at most 50). */
const once = <T>(make: (fx: Fixture) => Promise<T>) => {
  let made: Promise<T> | undefined;
  return (fx: Fixture) => (made ??= make(fx));
};
const instanceWebhook = once(freshInstanceWebhook);
const siteWebhook = once(freshSiteWebhook);

const serverPageview = (fx: Fixture) => ({
  url: `https://${fx.t.site.domain}/matrix`,
  timestamp: new Date().toISOString(),
  visitor_ip: '192.0.2.1',
  user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0',
});

/** The table. Keys are "METHOD /path" exactly as the OpenAPI document lists them. */
const MATRIX: Record<string, Entry> = {
  'GET /healthz': { allow: 'everyone' },
  'GET /readyz': { allow: 'everyone' },
  'GET /plumb.js': { allow: 'everyone' },
  'GET /plumb-vitals.js': { allow: 'everyone' },
  'GET /api/docs/v1/openapi.json': { allow: 'everyone' },
  // Only the metrics token reads it (and this node has none): no role, no API token, no session.
  'GET /metrics': { allow: [] },
  'GET /api/status': { allow: 'everyone' },
  'POST /ingest': { allow: 'everyone', body: () => ({ url: 'https://unknown.example/' }) },
  'POST /ingest/event': { allow: 'everyone', body: () => ({ url: 'https://unknown.example/', name: 'x' }) },
  'POST /ingest/web-vitals': { allow: 'everyone', body: () => ({ url: 'https://unknown.example/', metric: 'LCP', value: 1 }) },
  'POST /api/initial-user': { allow: 'everyone', body: () => ({ email: 'late@example.com', password: 'a long enough password' }) },
  'POST /api/login': { allow: 'everyone', body: () => ({ email: 'nobody@example.com', password: 'x' }) },
  'POST /api/logout': { allow: 'everyone', freshSession: true },
  'GET /api/auth/session': { allow: SIGNED_IN },
  'POST /api/auth/session/extend': { allow: SIGNED_IN },
  'POST /api/ingest/server/pageview': { allow: SCOPED_CLIENT, body: serverPageview },
  'POST /api/ingest/server/event': { allow: SCOPED_CLIENT, body: (fx) => ({ ...serverPageview(fx), name: 'Matrix' }) },
  'POST /api/ingest/server/batch': { allow: SCOPED_CLIENT, body: (fx) => ({ items: [{ type: 'pageview', ...serverPageview(fx) }] }) },
  // Sign-in flows: public, and bad proofs are refused alike for everyone.
  'POST /api/auth/mfa/totp/verify': { allow: 'everyone', body: () => ({ challenge_token: 'x', code: '123456' }) },
  'POST /api/auth/mfa/recovery-code/verify': { allow: 'everyone', body: () => ({ challenge_token: 'x', code: 'abcd-efgh-jk' }) },
  'POST /api/auth/passkey/login/start': { allow: 'everyone' },
  'POST /api/auth/passkey/login/finish': { allow: 'everyone', body: () => ({ challenge_token: 'x', response: { id: 'x', rawId: 'x', type: 'public-key', response: {} } }) },
  // The matrix node has no SMTP server: asking for mail answers 409 to everyone alike.
  'POST /api/auth/forgot-password': { allow: 'everyone', body: () => ({ email: 'nobody@example.com' }) },
  'POST /api/auth/reset-password': { allow: 'everyone', body: () => ({ token: 'not-a-real-reset-token', password: 'a long enough password' }) },
  'POST /api/user/email/confirm': { allow: 'everyone', body: () => ({ token: 'not-a-real-confirmation-token' }) },
  // A report's unsubscribe link: the token is the proof, a session changes nothing.
  'GET /api/email-reports/unsubscribe': { allow: 'everyone', query: 'token=not-a-real-unsubscribe-token' },
  'POST /api/email-reports/unsubscribe': { allow: 'everyone', query: 'token=not-a-real-unsubscribe-token' },
  'POST /api/auth/accept-invite': { allow: 'everyone', body: () => ({ token: 'not-a-real-invitation-token', password: 'a long enough password' }) },
  // Sign-in at other providers (GitHub is enabled on this node; its endpoints are never reached
  // before the provider's page): public starts and callbacks answer everyone alike.
  'GET /api/auth/providers': { allow: 'everyone' },
  'POST /api/auth/oauth/{provider}/start': { allow: 'everyone', params: () => ({ provider: 'github' }) },
  'GET /api/auth/oauth/{provider}/callback': { allow: 'everyone', params: () => ({ provider: 'github' }), query: 'code=x&state=y' },
  'GET /api/auth/oauth/confirm/{token}': { allow: 'everyone', params: () => ({ token: 'not-a-real-confirmation-token-at-all' }) },
  'POST /api/auth/sso/start': { allow: 'everyone', body: () => ({ email: 'someone@no-sso.example' }) },
  'GET /api/auth/sso/callback': { allow: 'everyone', query: 'code=x&state=y' },
  'GET /api/user/security/providers': { allow: SIGNED_IN },
  'POST /api/user/security/providers/{provider}/link': { allow: SIGNED_IN, params: () => ({ provider: 'github' }) },
  'DELETE /api/user/security/providers/{provider}': { allow: SIGNED_IN, ownResource: true, params: () => ({ provider: 'github' }) },
  // Own account and security.
  'GET /api/user/me': { allow: SIGNED_IN },
  'GET /api/user/takeout': { allow: SIGNED_IN },
  'POST /api/user/password': { allow: SIGNED_IN, body: () => ({ current_password: '', new_password: '' }) },
  'POST /api/user/email': { allow: SIGNED_IN, body: () => ({ email: 'elsewhere@example.net', password: 'x' }) },
  'GET /api/user/security': { allow: SIGNED_IN },
  'POST /api/user/security/totp/setup/start': { allow: SIGNED_IN },
  'POST /api/user/security/totp/setup/verify': { allow: SIGNED_IN, body: () => ({ code: '000000' }) },
  'POST /api/user/security/totp/disable': { allow: SIGNED_IN, body: () => ({ code: '000000' }) },
  'POST /api/user/security/recovery-codes/regenerate': { allow: SIGNED_IN, body: () => ({ code: '000000' }) },
  'GET /api/user/security/passkeys': { allow: SIGNED_IN },
  'POST /api/user/security/passkeys/register/start': { allow: SIGNED_IN },
  'POST /api/user/security/passkeys/register/finish': { allow: SIGNED_IN, body: () => ({ challenge_token: 'x', response: { id: 'x', rawId: 'x', type: 'public-key', response: {} } }) },
  'PATCH /api/user/security/passkeys/{id}': { allow: SIGNED_IN, ownResource: true, params: () => ({ id: NOBODY_ID }), body: () => ({ name: 'renamed' }) },
  'DELETE /api/user/security/passkeys/{id}': { allow: SIGNED_IN, ownResource: true, params: () => ({ id: NOBODY_ID }) },
  // API clients: people only, never tokens.
  'GET /api/user/api-clients': { allow: SIGNED_IN },
  'POST /api/user/api-clients': { allow: SIGNED_IN, body: () => ({ name: fresh('client'), scopes: ['stats:read'], sites: [] }) },
  'POST /api/user/api-clients/{id}/rotate': { allow: SIGNED_IN, ownResource: true, params: () => ({ id: NOBODY_ID }) },
  'DELETE /api/user/api-clients/{id}': { allow: SIGNED_IN, ownResource: true, params: () => ({ id: NOBODY_ID }) },
  // Instance users.
  'GET /api/admin/users': { allow: INSTANCE_ADMINS },
  'POST /api/admin/users': { allow: INSTANCE_ADMINS, body: () => ({ email: `${fresh('created')}@example.com`, password: 'a long enough password', role: 'user' }) },
  'PATCH /api/admin/users/{id}': { allow: INSTANCE_ADMINS, params: async (fx) => ({ id: await fx.freshUser() }), body: () => ({ role: 'user' }) },
  'POST /api/admin/users/{id}/disable-mfa': { allow: INSTANCE_ADMINS, params: async (fx) => ({ id: await fx.freshUser() }) },
  'DELETE /api/admin/users/{id}': { allow: INSTANCE_ADMINS, params: async (fx) => ({ id: await fx.freshUser() }) },
  'GET /api/admin/cluster': { allow: INSTANCE_ADMINS },
  'GET /api/admin/system': { allow: INSTANCE_ADMINS },
  // The matrix node has no SMTP server: an allowed caller gets 409, and nothing is sent.
  'POST /api/admin/mail/test': { allow: INSTANCE_ADMINS, body: () => ({ to: 'matrix@example.net' }) },
  // Teams: site roles are not team members; instance owners and admins administer every team.
  'GET /api/user/teams': { allow: SIGNED_IN },
  'POST /api/user/teams': { allow: SIGNED_IN, body: () => ({ name: fresh('team') }) },
  'PATCH /api/user/teams/{id}': { allow: INSTANCE_ADMINS, params: (fx) => ({ id: fx.teamId }), body: () => ({ name: 'Renamed team' }) },
  'POST /api/user/teams/{id}/archive': { allow: ['instance-owner'], params: async (fx) => ({ id: await fx.freshTeam() }) },
  'GET /api/user/teams/{id}/members': { allow: INSTANCE_ADMINS, params: (fx) => ({ id: fx.teamId }) },
  'POST /api/user/teams/{id}/members': { allow: INSTANCE_ADMINS, params: (fx) => ({ id: fx.teamId }), body: () => ({ email: `${fresh('invitee')}@example.com`, role: 'member' }) },
  'PATCH /api/user/teams/{id}/members/{userId}': {
    allow: INSTANCE_ADMINS,
    params: async (fx) => ({ id: fx.teamId, userId: await fx.freshTeamMember(fx.teamId) }),
    body: () => ({ role: 'member' }),
  },
  'DELETE /api/user/teams/{id}/members/{userId}': { allow: INSTANCE_ADMINS, params: async (fx) => ({ id: fx.teamId, userId: await fx.freshTeamMember(fx.teamId) }) },
  'GET /api/user/teams/{id}/invitations': { allow: INSTANCE_ADMINS, params: (fx) => ({ id: fx.teamId }) },
  'GET /api/user/invitations': { allow: SIGNED_IN },
  'GET /api/user/email-reports': { allow: SIGNED_IN },
  // Without an SMTP server subscribing answers 409: past the access check, so allowed.
  'PUT /api/sites/{id}/email-report': { allow: SITE_READERS, body: () => ({ frequency: 'weekly' }) },
  'POST /api/user/invitations/{invitationId}/accept': { allow: SIGNED_IN, ownResource: true, params: async (fx) => ({ invitationId: await fx.freshInvitation(fx.teamId) }) },
  'POST /api/user/invitations/{invitationId}/decline': { allow: SIGNED_IN, ownResource: true, params: async (fx) => ({ invitationId: await fx.freshInvitation(fx.teamId) }) },
  'POST /api/user/teams/{id}/invitations/{invitationId}/resend': {
    allow: INSTANCE_ADMINS,
    params: async (fx) => ({ id: fx.teamId, invitationId: await fx.freshInvitation(fx.teamId) }),
  },
  'DELETE /api/user/teams/{id}/invitations/{invitationId}': { allow: INSTANCE_ADMINS, params: async (fx) => ({ id: fx.teamId, invitationId: await fx.freshInvitation(fx.teamId) }) },
  'GET /api/user/teams/{id}/audit': { allow: INSTANCE_ADMINS, params: (fx) => ({ id: fx.teamId }) },
  // Team single sign-on: team owners and admins (and instance owners and admins, who administer every team).
  'GET /api/teams/{id}/sso': { allow: INSTANCE_ADMINS, params: (fx) => ({ id: fx.teamId }) },
  'PUT /api/teams/{id}/sso': {
    allow: INSTANCE_ADMINS,
    params: async (fx) => ({ id: await fx.freshTeam() }),
    body: () => ({ issuer: 'https://idp.example', client_id: 'matrix', client_secret: 'matrix secret', allowed_domains: [`${fresh('sso')}.example`] }),
  },
  'DELETE /api/teams/{id}/sso': { allow: INSTANCE_ADMINS, params: async (fx) => ({ id: await freshSsoTeam(fx) }) },
  'POST /api/teams/{id}/sso/test': { allow: INSTANCE_ADMINS, params: (fx) => ({ id: fx.teamId }), body: () => ({ issuer: 'https://127.0.0.1:9' }) },
  // Sites.
  'GET /api/sites': { allow: [...SIGNED_IN, 'client-scoped'] },
  'POST /api/sites': { allow: INSTANCE_ADMINS, body: (fx) => ({ domain: `${fresh('matrix')}.example`, team_id: fx.teamId }) },
  'GET /api/sites/{id}': { allow: [...SITE_READERS, 'client-scoped'] },
  'PATCH /api/sites/{id}': { allow: SITE_ADMINS, body: () => ({ timezone: 'Europe/Berlin' }) },
  'DELETE /api/sites/{id}': { allow: ['instance-owner', 'site-owner'], freshSite: true },
  'GET /api/sites/{id}/members': { allow: SITE_ADMINS },
  'PUT /api/sites/{id}/members/{userId}': { allow: SITE_ADMINS, params: async (fx) => ({ userId: await fx.freshUser() }), body: () => ({ role: 'viewer' }) },
  'DELETE /api/sites/{id}/members/{userId}': { allow: SITE_ADMINS, params: async (fx) => ({ userId: await fx.freshSiteMember(fx.siteId) }) },
  'POST /api/sites/{id}/transfer-team': { allow: ['instance-owner', 'site-owner'], body: (fx) => ({ team_id: fx.teamId }) },
  // Goals and funnels: read like stats; changed by editors (people, not tokens).
  'GET /api/sites/{id}/goals': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/goals/stats': { allow: [...SITE_READERS, 'client-scoped'] },
  'POST /api/sites/{id}/goals': { allow: EDITORS, body: () => ({ name: fresh('goal'), type: 'path', path_pattern: '/m' }) },
  'GET /api/sites/{id}/goals/{goalId}': { allow: [...SITE_READERS, 'client-scoped'], params: freshGoal },
  'PATCH /api/sites/{id}/goals/{goalId}': { allow: EDITORS, params: freshGoal, body: () => ({ name: fresh('goal') }) },
  'DELETE /api/sites/{id}/goals/{goalId}': { allow: EDITORS, params: freshGoal },
  'GET /api/sites/{id}/funnels': { allow: [...SITE_READERS, 'client-scoped'] },
  'POST /api/sites/{id}/funnels': { allow: EDITORS, body: () => ({ name: fresh('funnel'), steps }) },
  'GET /api/sites/{id}/funnels/{funnelId}': { allow: [...SITE_READERS, 'client-scoped'], params: freshFunnel },
  'GET /api/sites/{id}/funnels/{funnelId}/stats': { allow: [...SITE_READERS, 'client-scoped'], params: freshFunnel },
  'PATCH /api/sites/{id}/funnels/{funnelId}': { allow: EDITORS, params: freshFunnel, body: () => ({ name: fresh('funnel') }) },
  'DELETE /api/sites/{id}/funnels/{funnelId}': { allow: EDITORS, params: freshFunnel },
  // Stats: site viewers and tokens with stats:read.
  'GET /api/sites/{id}/stats': { allow: [...SITE_READERS, 'client-scoped'] },
  // The example plugin, loaded by path: its routes stand in the matrix like Plumb's own.
  'GET /api/sites/{id}/plugins/notes/notes': { allow: [...SITE_READERS, 'client-scoped'] },
  'POST /api/sites/{id}/plugins/notes/notes': { allow: EDITORS, body: () => ({ text: fresh('note') }) },
  'DELETE /api/sites/{id}/plugins/notes/notes/{noteId}': { allow: EDITORS, params: freshNote },
  'GET /api/plugins/notes/summary': { allow: INSTANCE_ADMINS },
  'GET /api/plugins/notes/sites': { allow: INSTANCE_ADMINS },
  'POST /api/plugins/notes/deleted-sites/clear': { allow: INSTANCE_ADMINS },
  'GET /api/plugins/archives/backups': { allow: INSTANCE_ADMINS },
  'GET /api/plugins/archives/summary': { allow: INSTANCE_ADMINS },
  // A second request while one is asked for answers 409: allowed, and nothing more is queued.
  'POST /api/plugins/archives/backups': { allow: INSTANCE_ADMINS },
  'DELETE /api/plugins/archives/backups/{backupId}': { allow: INSTANCE_ADMINS, params: freshFailedBackup },
  'GET /api/sites/{id}/plugins/archives/retention': { allow: SITE_ADMINS },
  'PUT /api/sites/{id}/plugins/archives/retention': { allow: SITE_ADMINS, body: () => ({ retention_days: null }) },
  // The AI plugin, loaded but not enabled: a run asked for answers 409 (allowed), and no provider is called.
  'GET /api/sites/{id}/plugins/ai/opportunities': { allow: [...SITE_READERS, 'client-scoped'] },
  'POST /api/sites/{id}/plugins/ai/runs': { allow: SITE_ADMINS, body: () => ({ from: '2026-03-01', to: '2026-03-07' }) },
  'GET /api/sites/{id}/plugins/ai/runs': { allow: SITE_ADMINS },
  'GET /api/sites/{id}/plugins/ai/runs/{runId}': { allow: SITE_ADMINS, params: freshAiRun },
  'POST /api/sites/{id}/plugins/ai/opportunities/{opportunityId}/save': { allow: SITE_ADMINS, params: freshOpportunity },
  'POST /api/sites/{id}/plugins/ai/opportunities/{opportunityId}/done': { allow: SITE_ADMINS, params: freshOpportunity },
  'POST /api/sites/{id}/plugins/ai/opportunities/{opportunityId}/dismiss': { allow: SITE_ADMINS, params: freshOpportunity },
  'POST /api/sites/{id}/plugins/ai/opportunities/{opportunityId}/reopen': { allow: SITE_ADMINS, params: freshOpportunity },
  'GET /api/plugins/ai/settings': { allow: INSTANCE_ADMINS },
  'GET /api/plugins/ai/usage': { allow: INSTANCE_ADMINS },
  'GET /api/plugins/ai/runs': { allow: INSTANCE_ADMINS },
  'GET /api/admin/plugins': { allow: INSTANCE_ADMINS },
  'GET /api/user/api-clients/scopes': { allow: SIGNED_IN },
  'GET /api/dashboard/plugins': { allow: SIGNED_IN },
  'GET /api/sites/{id}/plugins/notes/count': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/plugins/notes/settings': { allow: SITE_ADMINS },
  'PUT /api/sites/{id}/plugins/notes/settings': { allow: SITE_ADMINS, body: () => ({ retention_days: null }) },
  'POST /api/sites/{id}/plugins/notes/clear': { allow: SITE_ADMINS, freshSite: true },
  // The search-console plugin: connecting, choosing and syncing by site admins (people only); its
  // reports like stats. Without a connection the admin routes answer 409, which is still "allowed".
  'GET /api/sites/{id}/plugins/search-console/connection': { allow: SITE_ADMINS },
  'PUT /api/sites/{id}/plugins/search-console/connection': { allow: SITE_ADMINS, body: () => ({ property: null }) },
  'POST /api/sites/{id}/plugins/search-console/connect': { allow: SITE_ADMINS },
  'GET /api/sites/{id}/plugins/search-console/properties': { allow: SITE_ADMINS },
  'POST /api/sites/{id}/plugins/search-console/sync': { allow: SITE_ADMINS },
  'POST /api/sites/{id}/plugins/search-console/disconnect': { allow: SITE_ADMINS, freshSite: true },
  'GET /api/plugins/search-console/oauth/callback': { allow: SIGNED_IN, query: 'state=matrix&code=matrix' },
  'GET /api/sites/{id}/plugins/search-console/overview': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/plugins/search-console/timeseries': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/plugins/search-console/queries': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/plugins/search-console/pages': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/plugins/search-console/countries': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/plugins/search-console/devices': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/stats/breakdown': { allow: [...SITE_READERS, 'client-scoped'], query: 'dimension=pages' },
  'GET /api/sites/{id}/stats/kpis': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/stats/timeseries': { allow: [...SITE_READERS, 'client-scoped'] },
  // AI crawler reports: read like stats.
  'GET /api/sites/{id}/ai-fetches/summary': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/ai-fetches/timeseries': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/ai-fetches/pages': { allow: [...SITE_READERS, 'client-scoped'] },
  // Event analytics and realtime: site viewers and tokens with stats:read.
  'GET /api/sites/{id}/events/names': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/events/properties': { allow: [...SITE_READERS, 'client-scoped'], query: 'event_name=Signup' },
  'GET /api/sites/{id}/events/breakdown': { allow: [...SITE_READERS, 'client-scoped'], query: 'event_name=Signup&property_key=plan' },
  'GET /api/sites/{id}/events/timeseries': { allow: [...SITE_READERS, 'client-scoped'], query: 'event_name=Signup' },
  'GET /api/sites/{id}/events/audience': { allow: [...SITE_READERS, 'client-scoped'], query: 'event_name=Signup' },
  'GET /api/sites/{id}/realtime': { allow: [...SITE_READERS, 'client-scoped'], stream: true },
  // Exports: read like stats.
  'GET /api/sites/{id}/hits/export': { allow: [...SITE_READERS, 'client-scoped'] },
  'GET /api/sites/{id}/ai-fetch/export': { allow: [...SITE_READERS, 'client-scoped'] },
  // A takeout copies the whole site out, secrets aside: its admins only, never a token.
  'GET /api/sites/{id}/takeout': { allow: SITE_ADMINS },
  // Share links: managed by site admins; the public side answers everyone alike (404 for a bad token).
  'POST /api/sites/{id}/share': { allow: SITE_ADMINS },
  'GET /api/sites/{id}/share': { allow: SITE_ADMINS },
  'PATCH /api/sites/{id}/share/{shareId}': {
    allow: SITE_ADMINS,
    params: async (fx) => ({
      shareId: (await createShareLink(fx.t.node.runtime.metadata(), { id: await fx.freshUser(), email: 'sharer@example.com', role: 'user' }, fx.siteId, {}, '')).share.id,
    }),
    body: () => ({ embed_origins: ['https://blog.example.com'] }),
  },
  'DELETE /api/sites/{id}/share/{shareId}': {
    allow: SITE_ADMINS,
    params: async (fx) => ({
      shareId: (await createShareLink(fx.t.node.runtime.metadata(), { id: await fx.freshUser(), email: 'sharer@example.com', role: 'user' }, fx.siteId, {}, '')).share.id,
    }),
  },
  'GET /api/share/{token}': { allow: 'everyone' },
  'POST /api/share/{token}/unlock': { allow: 'everyone', body: () => ({ password: 'a long enough password' }) },
  'GET /api/share/{token}/stats': { allow: 'everyone' },
  'GET /api/share/{token}/stats/kpis': { allow: 'everyone' },
  'GET /api/share/{token}/stats/timeseries': { allow: 'everyone' },
  'GET /api/share/{token}/stats/breakdown': { allow: 'everyone' },
  'GET /api/share/{token}/events/names': { allow: 'everyone' },
  'GET /api/share/{token}/events/properties': { allow: 'everyone' },
  'GET /api/share/{token}/events/breakdown': { allow: 'everyone' },
  'GET /api/share/{token}/events/timeseries': { allow: 'everyone' },
  'GET /api/share/{token}/events/audience': { allow: 'everyone' },
  'GET /api/share/{token}/goals/stats': { allow: 'everyone' },
  // Webhooks: people only (tokens never); instance webhooks by instance owners and admins, site
  // webhooks by site owners and admins (and instance owners and admins).
  'GET /api/admin/webhooks': { allow: INSTANCE_ADMINS },
  'POST /api/admin/webhooks': { allow: INSTANCE_ADMINS, body: hookBody },
  'GET /api/admin/webhooks/events': { allow: INSTANCE_ADMINS },
  'GET /api/admin/webhooks/{webhookId}': { allow: INSTANCE_ADMINS, params: instanceWebhook },
  'PUT /api/admin/webhooks/{webhookId}': { allow: INSTANCE_ADMINS, params: instanceWebhook, body: hookBody },
  'DELETE /api/admin/webhooks/{webhookId}': { allow: INSTANCE_ADMINS, params: freshInstanceWebhook },
  'POST /api/admin/webhooks/{webhookId}/rotate': { allow: INSTANCE_ADMINS, params: instanceWebhook },
  'POST /api/admin/webhooks/{webhookId}/test': { allow: INSTANCE_ADMINS, params: instanceWebhook },
  'GET /api/admin/webhooks/{webhookId}/deliveries': { allow: INSTANCE_ADMINS, params: instanceWebhook },
  'GET /api/sites/{id}/webhooks': { allow: SITE_ADMINS },
  'POST /api/sites/{id}/webhooks': { allow: SITE_ADMINS, body: hookBody },
  'GET /api/sites/{id}/webhooks/events': { allow: SITE_ADMINS },
  'GET /api/sites/{id}/webhooks/{webhookId}': { allow: SITE_ADMINS, params: siteWebhook },
  'PUT /api/sites/{id}/webhooks/{webhookId}': { allow: SITE_ADMINS, params: siteWebhook, body: hookBody },
  'DELETE /api/sites/{id}/webhooks/{webhookId}': { allow: SITE_ADMINS, params: freshSiteWebhook },
  'POST /api/sites/{id}/webhooks/{webhookId}/rotate': { allow: SITE_ADMINS, params: siteWebhook },
  'POST /api/sites/{id}/webhooks/{webhookId}/test': { allow: SITE_ADMINS, params: siteWebhook },
  'GET /api/sites/{id}/webhooks/{webhookId}/deliveries': { allow: SITE_ADMINS, params: siteWebhook },
  // Imports: site admins, people only.
  'GET /api/sites/{id}/importers': { allow: SITE_ADMINS },
  'GET /api/sites/{id}/imports': { allow: SITE_ADMINS },
  'POST /api/sites/{id}/imports': { allow: SITE_ADMINS, body: () => importBody },
  'GET /api/sites/{id}/imports/{importId}': { allow: SITE_ADMINS, params: freshImport },
  'PUT /api/sites/{id}/imports/{importId}/files/{index}': { allow: SITE_ADMINS, params: async (fx) => ({ ...(await freshImport(fx)), index: '0' }), query: 'offset=0', bytes: () => importBytes },
  'POST /api/sites/{id}/imports/{importId}/validate': { allow: SITE_ADMINS, params: freshImport },
  'POST /api/sites/{id}/imports/{importId}/start': { allow: SITE_ADMINS, params: freshImport },
  'DELETE /api/sites/{id}/imports/{importId}': { allow: SITE_ADMINS, params: freshImport },
  'GET /api/favicon/{domain}': { allow: 'everyone', params: () => ({ domain: 'example.com' }) },
  'GET /api/favicon/source/{name}': { allow: 'everyone', params: () => ({ name: 'Google' }) },
  // The MCP server: an API-client token with the mcp scope, nothing else (a session cookie is no
  // credential there). Which sites its tools read is answered per tool call (test/integration/mcp.test.ts).
  'POST /mcp': {
    allow: SCOPED_CLIENT,
    headers: { Accept: 'application/json, text/event-stream' },
    body: (fx) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_kpis', arguments: { site_id: fx.siteId } } }),
  },
  'POST /api/sites/{id}/ingest/ai-fetch': {
    allow: SCOPED_CLIENT,
    body: () => ({ path: '/', status_code: 200, user_agent: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)' }),
  },
};

/** Statuses that are not about the caller's rights: the gateway's own refusals of an anonymous tracker post etc. */
const DENIED = new Set([401, 403, 404]);

let t: TestNode;
let fx: Fixture;
let documented: string[];
const archivesTarget = mkdtempSync(join(tmpdir(), 'plumb-matrix-archives-'));

beforeAll(async () => {
  // The favicon upstream is a closed local port: the proxy answers its placeholder without leaving the machine.
  t = await startTestNode({ PLUMB_PLUGINS: './plugins/examples/notes,archives,ai,search-console', PLUMB_ARCHIVES_TARGET: archivesTarget, PLUMB_FAVICON_UPSTREAM: 'http://127.0.0.1:9/', PLUMB_FAVICON_ALLOW_PRIVATE_UPSTREAM: 'true', PLUMB_GITHUB_CLIENT_ID: 'matrix', PLUMB_GITHUB_CLIENT_SECRET: 'matrix secret', PLUMB_LOGIN_RATE_PER_MINUTE: '100000', PLUMB_LOGIN_BURST: '100000', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000', PLUMB_INGEST_RATE_PER_SECOND: '100000', PLUMB_INGEST_BURST: '100000' });
  fx = await buildFixture(t);
  const doc = (await (await fetch(`${t.url}/api/docs/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
}, 60_000);

afterAll(async () => {
  await t.stop();
  rmSync(archivesTarget, { recursive: true, force: true });
});

describe('the permission matrix', () => {
  it('has an entry for every route the node serves, and no entry for a route it does not serve', () => {
    expect(documented.filter((route) => !(route in MATRIX)).sort()).toEqual([]);
    expect(Object.keys(MATRIX).filter((route) => !documented.includes(route)).sort()).toEqual([]);
  });

  it.each(Object.entries(MATRIX))('%s', async (route, entry) => {
    const [method, template] = route.split(' ');
    const outcomes: Record<string, string> = {};
    let publicStatus: number | undefined;
    const expected: Record<string, string> = {};
    for (const role of ROLES) {
      // The cookie-less public routes answer everyone the same way; tokens and cookies change nothing.
      let headers = entry.freshSession ? await fx.freshSessionHeaders(role) : fx.headers(role);
      let params: Record<string, string> = { id: fx.siteId, ...(await entry.params?.(fx)) };
      if (entry.freshSite) {
        const fresh = await fx.freshSite(role);
        headers = fresh.headers;
        params = { ...params, id: fresh.siteId };
      }
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? name);
      const sendsBody = ['POST', 'PUT', 'PATCH'].includes(method);
      const bytes = entry.bytes?.();
      const abort = new AbortController();
      const res = await fetch(`${t.url}${path}${entry.query ? `?${entry.query}` : ''}`, {
        method,
        headers: { ...entry.headers, ...headers, ...(sendsBody ? { 'Content-Type': bytes ? 'application/octet-stream' : 'application/json' } : {}) },
        body: bytes ?? (sendsBody ? JSON.stringify(entry.body?.(fx) ?? {}) : undefined),
        signal: abort.signal,
        // A sign-in callback answers with a redirect: its status is the outcome.
        redirect: 'manual',
      });
      if (entry.stream && res.status === 200) abort.abort();
      else await res.arrayBuffer();
      if (entry.allow === 'everyone') {
        // Public routes may refuse a request for reasons of their own (unknown origin, bad login), but alike for all.
        expected[role] = String(publicStatus ?? res.status);
        publicStatus ??= res.status;
        outcomes[role] = String(res.status);
        continue;
      }
      expected[role] = entry.allow.includes(role) ? 'allowed' : 'denied';
      const denied = entry.ownResource ? res.status === 401 || res.status === 403 : DENIED.has(res.status);
      outcomes[role] = denied ? 'denied' : 'allowed';
    }
    expect(outcomes).toEqual(expected);
  });
});
