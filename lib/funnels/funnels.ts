// Funnels of a site: 2–8 ordered steps (each a custom event or a path pattern) that a visitor must
// take in order within a conversion window. Create, list, read, change, delete; each change in one
// transaction with its team audit entry.
import { randomUUID } from 'node:crypto';
import type { UserPrincipal } from '../auth/sessions.ts';
import { type AuditSite, auditedSite, writeAudit } from '../audit/audit.ts';
import { conflict, type FieldError, notFound, validationFailed } from '../errors.ts';
import { eventNameProblem, pathPatternProblem } from '../goals/goals.ts';
import type { MatchType } from '../goals/matcher.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { pageOf, type Page } from '../pagination.ts';

export interface FunnelStep {
  type: MatchType;
  event_name?: string;
  path_pattern?: string;
  label?: string;
}

export interface Funnel {
  id: string;
  site_id: string;
  name: string;
  steps: FunnelStep[];
  window_seconds: number;
  created_at: string;
}

export interface FunnelInput {
  name: string;
  steps: FunnelStep[];
  window_seconds?: number;
}

export const MIN_STEPS = 2;
export const MAX_STEPS = 8;
export const DEFAULT_WINDOW_SECONDS = 86_400;
export const MAX_FUNNELS_PER_SITE = 100;
const UNIQUE_VIOLATION = '23505';

const STEP = {
  type: 'object',
  strict: true,
  props: {
    type: { type: 'enum', values: ['event', 'path'] },
    event_name: { type: 'string', min: 1, max: 120, optional: true },
    path_pattern: { type: 'string', min: 1, max: 1024, optional: true },
    label: { type: 'string', min: 1, max: 120, optional: true },
  },
};

/** The shapes the actions accept (fastest-validator); each step's own rules are checked below. */
export const FUNNEL_FIELDS = {
  name: { type: 'string', min: 1, max: 120, trim: true },
  steps: { type: 'array', min: MIN_STEPS, max: MAX_STEPS, items: STEP },
  window_seconds: { type: 'number', integer: true, min: 60, max: 2_592_000, optional: true },
} as const;

/** Steps as stored: exactly the matcher of their type, plus a label when given. Throws 400 with every problem. */
export function checkSteps(steps: readonly FunnelStep[]): FunnelStep[] {
  const problems: FieldError[] = [];
  const checked = steps.map((step, index): FunnelStep => {
    const problem = (name: string, message: string) => {
      const field = `steps[${index}].${name}`;
      problems.push({ field, message: `${field} ${message}` });
    };
    const label = step.label === undefined ? {} : { label: step.label };
    if (step.type === 'event') {
      if (step.path_pattern !== undefined) problem('path_pattern', 'applies to path steps only');
      const bad = step.event_name === undefined ? 'is required for event steps' : eventNameProblem(step.event_name);
      if (bad) problem('event_name', bad);
      return { type: 'event', event_name: step.event_name, ...label };
    }
    if (step.event_name !== undefined) problem('event_name', 'applies to event steps only');
    const bad = step.path_pattern === undefined ? 'is required for path steps' : pathPatternProblem(step.path_pattern);
    if (bad) problem('path_pattern', bad);
    return { type: 'path', path_pattern: step.path_pattern, ...label };
  });
  if (steps.length < MIN_STEPS || steps.length > MAX_STEPS) problems.push({ field: 'steps', message: `steps must hold ${MIN_STEPS} to ${MAX_STEPS} steps` });
  if (problems.length > 0) throw validationFailed(problems);
  return checked;
}

/** What a step is called in stats: its label, or what it matches. */
export const stepLabel = (step: FunnelStep) => step.label ?? (step.type === 'event' ? step.event_name : step.path_pattern) ?? '';

interface FunnelRow {
  id: string;
  site_id: string;
  name: string;
  steps: FunnelStep[] | string;
  window_seconds: number;
  created_at: Date | string;
}

const COLUMNS = 'id, site_id, name, steps, window_seconds, created_at';

/** jsonb keeps keys in its own order; steps are rebuilt so every answer lists them alike. */
const canonicalStep = (step: FunnelStep): FunnelStep => ({
  type: step.type,
  ...(step.type === 'event' ? { event_name: step.event_name } : { path_pattern: step.path_pattern }),
  ...(step.label === undefined ? {} : { label: step.label }),
});

const toFunnel = (row: FunnelRow): Funnel => ({
  id: row.id,
  site_id: row.site_id,
  name: row.name,
  steps: (typeof row.steps === 'string' ? (JSON.parse(row.steps) as FunnelStep[]) : row.steps).map(canonicalStep),
  window_seconds: row.window_seconds,
  created_at: new Date(row.created_at).toISOString(),
});

export async function listFunnels(db: MetadataQueryable, siteId: string, page: { limit: number; offset: number }): Promise<Page<Funnel>> {
  const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM funnels WHERE site_id = $1', [siteId]);
  const { rows } = await db.query<FunnelRow>(`SELECT ${COLUMNS} FROM funnels WHERE site_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`, [siteId, page.limit, page.offset]);
  const total = counted.rows[0].n;
  return pageOf(rows.map(toFunnel), total, page);
}

export async function getFunnel(db: MetadataQueryable, siteId: string, funnelId: string): Promise<Funnel> {
  const { rows } = await db.query<FunnelRow>(`SELECT ${COLUMNS} FROM funnels WHERE site_id = $1 AND id = $2`, [siteId, funnelId]);
  if (!rows[0]) throw notFound('Funnel not found');
  return toFunnel(rows[0]);
}

/** A funnel as its audit entry names it: its name and its site's domain at the time, its id beside. */
const audited = (funnel: Pick<Funnel, 'id' | 'name'>, site: AuditSite) => ({ site, subject: { type: 'funnel' as const, id: funnel.id, name: funnel.name }, details: `funnel "${funnel.name}" on ${site.domain}` });

async function uniqueName<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw conflict('A funnel with this name already exists on the site');
    throw err;
  }
}

async function assertNameFree(tx: MetadataQueryable, siteId: string, name: string, exceptId: string | null): Promise<void> {
  const { rows } = await tx.query('SELECT 1 FROM funnels WHERE site_id = $1 AND name = $2 AND ($3::uuid IS NULL OR id <> $3)', [siteId, name, exceptId]);
  if (rows[0]) throw conflict(`A funnel named "${name}" already exists on the site`);
}

export async function createFunnel(store: MetadataStore, actor: UserPrincipal, siteId: string, input: FunnelInput): Promise<Funnel> {
  const name = input.name.trim();
  const steps = checkSteps(input.steps);
  return uniqueName(() =>
    store.transaction(async (tx) => {
      const { teamId, ...site } = await auditedSite(tx, siteId);
      const counted = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM funnels WHERE site_id = $1', [siteId]);
      if (counted.rows[0].n >= MAX_FUNNELS_PER_SITE) throw conflict(`A site has at most ${MAX_FUNNELS_PER_SITE} funnels; remove one first`);
      await assertNameFree(tx, siteId, name, null);
      const { rows } = await tx.query<FunnelRow>(
        `INSERT INTO funnels (id, site_id, name, steps, window_seconds) VALUES ($1, $2, $3, $4::jsonb, $5) RETURNING ${COLUMNS}`,
        [randomUUID(), siteId, name, JSON.stringify(steps), input.window_seconds ?? DEFAULT_WINDOW_SECONDS],
      );
      const funnel = toFunnel(rows[0]);
      await writeAudit(tx, { teamId, action: 'funnel.created', actor, ...audited(funnel, site) });
      return funnel;
    }),
  );
}

/** Name, steps (the list replaces the old one) and window each change only when given. */
export async function updateFunnel(store: MetadataStore, actor: UserPrincipal, siteId: string, funnelId: string, changes: Partial<FunnelInput>): Promise<Funnel> {
  const steps = changes.steps === undefined ? undefined : checkSteps(changes.steps);
  return uniqueName(() =>
    store.transaction(async (tx) => {
      const { teamId, ...site } = await auditedSite(tx, siteId);
      const before = await getFunnel(tx, siteId, funnelId);
      const after = { name: changes.name?.trim() ?? before.name, steps: steps ?? before.steps, window_seconds: changes.window_seconds ?? before.window_seconds };
      const same = JSON.stringify({ ...after, steps: after.steps.map(canonicalStep) }) === JSON.stringify({ name: before.name, steps: before.steps, window_seconds: before.window_seconds });
      if (same) return before;
      if (after.name !== before.name) await assertNameFree(tx, siteId, after.name, funnelId);
      const { rows } = await tx.query<FunnelRow>(
        `UPDATE funnels SET name = $3, steps = $4::jsonb, window_seconds = $5, updated_at = now() WHERE site_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
        [siteId, funnelId, after.name, JSON.stringify(after.steps), after.window_seconds],
      );
      const funnel = toFunnel(rows[0]);
      await writeAudit(tx, { teamId, action: 'funnel.updated', actor, ...audited(funnel, site) });
      return funnel;
    }),
  );
}

export async function deleteFunnel(store: MetadataStore, actor: UserPrincipal, siteId: string, funnelId: string): Promise<void> {
  await store.transaction(async (tx) => {
    const { teamId, ...site } = await auditedSite(tx, siteId);
    const funnel = await getFunnel(tx, siteId, funnelId);
    await tx.query('DELETE FROM funnels WHERE site_id = $1 AND id = $2', [siteId, funnelId]);
    await writeAudit(tx, { teamId, action: 'funnel.deleted', actor, ...audited(funnel, site) });
  });
}
