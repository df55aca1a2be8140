// Webhook management: validate, create, list, read, replace, delete, rotate the secret, read the
// delivery history. Instance webhooks and a site's webhooks are separate owners: every lookup is
// made within one owner, so an id of the other kind answers 404. Each change runs in one
// transaction with its audit entry (team audit for site webhooks, instance audit otherwise).
import { randomUUID } from 'node:crypto';
import { auditedSite, writeAudit } from '../audit/audit.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { createSecretBox, type SecretBox } from '../auth/secret-box.ts';
import { conflict, type FieldError, notFound, validationFailed } from '../errors.ts';
import { checkDestination, OutboundError } from '../net/guarded-fetch.ts';
import { type Page, pageOf, type PageQuery } from '../pagination.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { writeInstanceAudit } from '../users/admin.ts';
import { type CatalogEntry, subscriptionProblem, type WebhookScope } from './catalog.ts';
import { newSigningSecret } from './signing.ts';

/** Whose webhooks: the instance's, or one site's. */
export type WebhookOwner = { scope: 'instance' } | { scope: 'site'; siteId: string };

export interface WebhookView {
  id: string;
  scope: WebhookScope;
  site_id: string | null;
  name: string;
  description: string;
  url: string;
  events: string[];
  enabled: boolean;
  created_at: string;
  updated_at: string;
  secret_rotated_at: string;
}

export interface WebhookInput {
  name: string;
  description?: string;
  url: string;
  events: string[];
  enabled?: boolean;
}

/** The webhook and its signing secret: answered by create and rotate only, never again. */
export interface WebhookWithSecret {
  webhook: WebhookView;
  secret: string;
}

export interface DestinationPolicy {
  /** PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: http and loopback/private destinations allowed. */
  allowDevelopmentTargets: boolean;
  /** DNS for destination checks; default: the system resolver. */
  resolver?: (host: string) => Promise<string[]>;
}

export interface WebhookDeps {
  store: MetadataStore;
  secrets: SecretBox;
  policy: DestinationPolicy;
  /** Event types the node's plugins add to the catalog. */
  addedEvents?: readonly CatalogEntry[];
}

export const MAX_WEBHOOKS_PER_OWNER = 50;

/** Seals signing secrets at rest with a key derived from the JWT secret (its own purpose, its own key). */
export const webhookSecretBox = (jwtSecret: Uint8Array): SecretBox => createSecretBox(jwtSecret, 'webhook-signing-secret');
const MAX_URL_LENGTH = 2048;
const RESOLVE_TIMEOUT_MS = 5000;

/** Shapes the actions accept (fastest-validator, unknown fields refused); rules across fields are checked below. */
export const WEBHOOK_FIELDS = {
  name: { type: 'string', min: 1, max: 120, trim: true },
  description: { type: 'string', max: 1000, optional: true },
  url: { type: 'string', min: 1, max: MAX_URL_LENGTH },
  events: { type: 'array', min: 1, max: 32, items: { type: 'string', min: 1, max: 64 } },
  enabled: { type: 'boolean', optional: true },
} as const;

/** Why a URL may not receive webhooks (a phrase following "url"), or null. Resolves the host (README: Webhooks, Destinations). */
export async function destinationProblem(raw: string, policy: DestinationPolicy): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute https:// URL';
  }
  // URL drops an empty fragment ("https://x/#"), so look at the text itself.
  if (raw.includes('#')) return 'must not contain a fragment (#…)';
  if (url.username || url.password) return 'must not contain credentials (user:password@); authenticate with the signature instead';
  const schemes = policy.allowDevelopmentTargets ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return policy.allowDevelopmentTargets ? 'must be an http:// or https:// URL' : 'must be an https:// URL';
  try {
    await checkDestination(url, { allowPrivate: policy.allowDevelopmentTargets, resolver: policy.resolver, timeoutMs: RESOLVE_TIMEOUT_MS });
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    if (err.kind === 'blocked_address') return `must not reach a reserved address: ${err.message} (loopback, private, link-local, multicast, documentation and other reserved addresses are refused)`;
    if (err.kind === 'dns' || err.kind === 'timeout') return `must name a host that resolves (${url.hostname} does not)`;
    return `cannot be used: ${err.message}`;
  }
  return null;
}

/** The input as stored (name trimmed, events de-duplicated in order); 400 naming every bad field. */
async function checkInput(input: WebhookInput, scope: WebhookScope, policy: DestinationPolicy, addedEvents: readonly CatalogEntry[] = []): Promise<Required<WebhookInput>> {
  const problems: FieldError[] = [];
  const name = input.name.trim();
  if (name === '') problems.push({ field: 'name', message: 'name must not be blank' });
  const events = [...new Set(input.events)];
  for (const type of events) {
    const problem = subscriptionProblem(scope, type, addedEvents);
    if (problem) problems.push({ field: 'events', message: `events: ${problem}` });
  }
  const urlProblem = await destinationProblem(input.url, policy);
  if (urlProblem) problems.push({ field: 'url', message: `url ${urlProblem}` });
  if (problems.length > 0) throw validationFailed(problems);
  return { name, description: input.description?.trim() ?? '', url: input.url, events, enabled: input.enabled ?? true };
}

/** A row as the driver returns it: timestamps may come back as Date objects. */
type WebhookRow = Omit<WebhookView, 'created_at' | 'updated_at' | 'secret_rotated_at'> & Record<'created_at' | 'updated_at' | 'secret_rotated_at', Date | string>;

const COLUMNS = 'id, scope, site_id, name, description, url, events, enabled, created_at, updated_at, secret_rotated_at';
const iso = (value: Date | string) => new Date(value).toISOString();
const toView = (row: WebhookRow): WebhookView => ({
  id: row.id,
  scope: row.scope,
  site_id: row.site_id,
  name: row.name,
  description: row.description,
  url: row.url,
  events: row.events,
  enabled: row.enabled,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  secret_rotated_at: iso(row.secret_rotated_at),
});
const siteOf = (owner: WebhookOwner) => (owner.scope === 'site' ? owner.siteId : null);
/** Rows of this owner only: `$1` scope, `$2` site id (null for the instance). */
const OWNED = 'scope = $1 AND site_id IS NOT DISTINCT FROM $2::uuid AND deleted_at IS NULL';

/** The change's audit entry; `more` adds to the webhook's name what else happened. A team's entry names the site and the webhook, with their ids beside. */
async function audit(tx: MetadataQueryable, owner: WebhookOwner, actor: UserPrincipal, action: string, webhook: { id: string; name: string }, more = '') {
  if (owner.scope === 'instance') {
    await writeInstanceAudit(tx, { action: `webhook.${action}`, actor, details: `webhook ${webhook.id} (${webhook.name})${more}` });
    return;
  }
  const { teamId, ...site } = await auditedSite(tx, owner.siteId);
  const subject = { type: 'webhook' as const, ...webhook };
  await writeAudit(tx, { teamId, action: `site.webhook.${action}`, actor, site, subject, details: `webhook "${webhook.name}" on ${site.domain}${more}` });
}

async function lockedWebhook(tx: MetadataQueryable, owner: WebhookOwner, id: string): Promise<WebhookRow> {
  const { rows } = await tx.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE id = $3 AND ${OWNED} FOR UPDATE`, [owner.scope, siteOf(owner), id]);
  if (!rows[0]) throw notFound('Webhook not found');
  return rows[0];
}

export async function createWebhook(deps: WebhookDeps, actor: UserPrincipal, owner: WebhookOwner, input: WebhookInput): Promise<WebhookWithSecret> {
  const checked = await checkInput(input, owner.scope, deps.policy, deps.addedEvents);
  const id = randomUUID();
  const secret = newSigningSecret();
  const row = await deps.store.transaction(async (tx) => {
    const counted = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhooks WHERE ${OWNED}`, [owner.scope, siteOf(owner)]);
    if (counted.rows[0].n >= MAX_WEBHOOKS_PER_OWNER) throw conflict(`At most ${MAX_WEBHOOKS_PER_OWNER} webhooks per ${owner.scope}; delete one first`);
    const { rows } = await tx.query<WebhookRow>(
      `INSERT INTO webhooks (id, scope, site_id, name, description, url, events, enabled, secret_sealed, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [id, owner.scope, siteOf(owner), checked.name, checked.description, checked.url, checked.events, checked.enabled, deps.secrets.seal(secret, id), actor.id],
    );
    await audit(tx, owner, actor, 'created', { id, name: checked.name }, ` → ${new URL(checked.url).host}`);
    return rows[0];
  });
  return { webhook: toView(row), secret };
}

export async function listWebhooks(db: MetadataQueryable, owner: WebhookOwner, page: PageQuery): Promise<Page<WebhookView>> {
  const { rows } = await db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE ${OWNED} ORDER BY created_at, id LIMIT $3 OFFSET $4`, [
    owner.scope,
    siteOf(owner),
    page.limit,
    page.offset,
  ]);
  const counted = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhooks WHERE ${OWNED}`, [owner.scope, siteOf(owner)]);
  return pageOf(rows.map(toView), counted.rows[0].n, page);
}

export async function getWebhook(db: MetadataQueryable, owner: WebhookOwner, id: string): Promise<WebhookView> {
  const { rows } = await db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE id = $3 AND ${OWNED}`, [owner.scope, siteOf(owner), id]);
  if (!rows[0]) throw notFound('Webhook not found');
  return toView(rows[0]);
}

/** PUT: the input replaces every field (an omitted description becomes empty, an omitted enabled true). */
export async function replaceWebhook(deps: WebhookDeps, actor: UserPrincipal, owner: WebhookOwner, id: string, input: WebhookInput): Promise<WebhookView> {
  const checked = await checkInput(input, owner.scope, deps.policy, deps.addedEvents);
  const row = await deps.store.transaction(async (tx) => {
    await lockedWebhook(tx, owner, id);
    const { rows } = await tx.query<WebhookRow>(
      `UPDATE webhooks SET name = $2, description = $3, url = $4, events = $5, enabled = $6, updated_at = now()
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, checked.name, checked.description, checked.url, checked.events, checked.enabled],
    );
    await audit(tx, owner, actor, 'updated', { id, name: checked.name });
    return rows[0];
  });
  return toView(row);
}

/** Stops every delivery not yet made (cancelled); the records stay in the store until retention removes them. */
export async function deleteWebhook(deps: WebhookDeps, actor: UserPrincipal, owner: WebhookOwner, id: string): Promise<{ cancelled: number }> {
  return deps.store.transaction(async (tx) => {
    const row = await lockedWebhook(tx, owner, id);
    await tx.query('UPDATE webhooks SET deleted_at = now(), enabled = false, updated_at = now() WHERE id = $1', [id]);
    const cancelled = await tx.query(
      `UPDATE webhook_deliveries SET status = 'cancelled', completed_at = now(), updated_at = now(), lease_expires_at = NULL, claim_token = NULL
        WHERE webhook_id = $1 AND status IN ('pending', 'retrying', 'processing')`,
      [id],
    );
    await audit(tx, owner, actor, 'deleted', { id, name: row.name }, `; ${cancelled.rowCount} pending deliveries cancelled`);
    return { cancelled: cancelled.rowCount };
  });
}

/**
 * A new secret replaces the old at once. Deliveries are signed when they are sent, with the secret
 * of that moment, so every pending, retrying or processing delivery is re-signed with this one
 * (only a request already on the wire carries the old signature).
 */
export async function rotateSecret(deps: WebhookDeps, actor: UserPrincipal, owner: WebhookOwner, id: string): Promise<WebhookWithSecret> {
  const secret = newSigningSecret();
  const row = await deps.store.transaction(async (tx) => {
    await lockedWebhook(tx, owner, id);
    const { rows } = await tx.query<WebhookRow>(
      `UPDATE webhooks SET secret_sealed = $2, secret_rotated_at = now(), updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, deps.secrets.seal(secret, id)],
    );
    await audit(tx, owner, actor, 'secret_rotated', { id, name: rows[0].name });
    return rows[0];
  });
  return { webhook: toView(row), secret };
}

export interface DeliveryAttempt {
  attempt: number;
  started_at: string;
  duration_ms: number | null;
  response_status: number | null;
  error: string | null;
}

/** One line of delivery history. Never the request body, never a secret. */
export interface DeliveryView {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'processing' | 'retrying' | 'succeeded' | 'failed' | 'cancelled';
  attempts: number;
  response_status: number | null;
  error: string | null;
  created_at: string;
  next_attempt_at: string | null;
  completed_at: string | null;
  attempt_log: DeliveryAttempt[];
}

interface DeliveryRow extends Omit<DeliveryView, 'created_at' | 'next_attempt_at' | 'completed_at' | 'attempt_log'> {
  created_at: Date | string;
  next_attempt_at: Date | string;
  completed_at: Date | string | null;
  attempt_log: DeliveryAttempt[] | string;
}

/** The webhook's deliveries, newest first (the webhook must still exist: a deleted one answers 404). */
export async function listDeliveries(db: MetadataQueryable, owner: WebhookOwner, webhookId: string, page: PageQuery): Promise<Page<DeliveryView>> {
  await getWebhook(db, owner, webhookId);
  const { rows } = await db.query<DeliveryRow>(
    `SELECT d.id, d.event_id, e.type AS event_type, d.status, d.attempts, d.response_status, d.error,
            d.created_at, d.next_attempt_at, d.completed_at,
            coalesce((SELECT json_agg(json_build_object(
                        'attempt', a.attempt,
                        'started_at', to_char(a.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                        'duration_ms', a.duration_ms, 'response_status', a.response_status, 'error', a.error)
                      ORDER BY a.started_at)
                        FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempt_log
       FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
      WHERE d.webhook_id = $1
      ORDER BY d.created_at DESC, d.id DESC LIMIT $2 OFFSET $3`,
    [webhookId, page.limit, page.offset],
  );
  const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [webhookId]);
  const items = rows.map((row) => {
    const waiting = row.status === 'pending' || row.status === 'retrying';
    return {
      id: row.id,
      event_id: row.event_id,
      event_type: row.event_type,
      status: row.status,
      attempts: row.attempts,
      response_status: row.response_status,
      error: row.error,
      created_at: iso(row.created_at),
      next_attempt_at: waiting ? iso(row.next_attempt_at) : null,
      completed_at: row.completed_at === null ? null : iso(row.completed_at),
      attempt_log: typeof row.attempt_log === 'string' ? (JSON.parse(row.attempt_log) as DeliveryAttempt[]) : row.attempt_log,
    };
  });
  return pageOf(items, counted.rows[0].n, page);
}
