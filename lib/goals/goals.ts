// Goals of a site: validate, create, list, read, change, delete. Each change runs in one
// transaction with its team audit entry, so an entry exists exactly when the change does.
import { randomUUID } from 'node:crypto';
import type { UserPrincipal } from '../auth/sessions.ts';
import { type AuditSite, auditedSite, writeAudit } from '../audit/audit.ts';
import { conflict, type FieldError, notFound, validationFailed } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import type { MatchType, PropertyCondition } from './matcher.ts';
import { pageOf, type Page } from '../pagination.ts';

export interface Goal {
  id: string;
  site_id: string;
  name: string;
  type: MatchType;
  /** Event goals only. */
  event_name?: string;
  /** Event goals only; every condition must hold. */
  property_conditions?: PropertyCondition[];
  /** Path goals only. */
  path_pattern?: string;
  revenue?: { currency: string };
  created_at: string;
}

export interface GoalInput {
  name: string;
  type: MatchType;
  event_name?: string;
  property_conditions?: PropertyCondition[] | null;
  path_pattern?: string;
  revenue?: { currency: string } | null;
}

export type GoalChanges = Partial<GoalInput>;


export const MAX_GOALS_PER_SITE = 100;
export const MAX_PROPERTY_CONDITIONS = 10;
const UNIQUE_VIOLATION = '23505';
/** ICU's list is ISO 4217's active codes; a made-up "XYZ" is refused rather than stored. */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** The shapes the actions accept (fastest-validator); rules across fields are checked below. */
export const GOAL_FIELDS = {
  name: { type: 'string', min: 1, max: 120, trim: true },
  type: { type: 'enum', values: ['event', 'path'] },
  event_name: { type: 'string', min: 1, max: 120, optional: true },
  property_conditions: {
    type: 'array',
    max: MAX_PROPERTY_CONDITIONS,
    optional: true,
    nullable: true,
    items: { type: 'object', strict: true, props: { key: { type: 'string', min: 1, max: 64 }, value: { type: 'string', max: 256 } } },
  },
  path_pattern: { type: 'string', min: 1, max: 1024, optional: true },
  revenue: { type: 'object', strict: true, optional: true, nullable: true, props: { currency: { type: 'string', length: 3 } } },
} as const;

/** Event names starting with `$` are Plumb's own (ingest refuses them from anyone else). The problem follows the field's name. */
export function eventNameProblem(name: string): string | null {
  if (name.startsWith('$')) return 'must not start with $ (names starting with $ are reserved)';
  return null;
}

/** A path pattern is an absolute path; `*` is the only wildcard. */
export function pathPatternProblem(pattern: string): string | null {
  if (!pattern.startsWith('/')) return "must start with '/' (an exact path, or a wildcard such as /blog/*)";
  if (/\s/.test(pattern)) return 'must not contain whitespace';
  return null;
}

/** The goal as stored: fields of the other type dropped, currency upper-cased. Throws 400 with every problem. */
export function checkGoal(input: GoalInput): Omit<Goal, 'id' | 'site_id' | 'created_at'> {
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message: `${field} ${message}` });
  const goal: Omit<Goal, 'id' | 'site_id' | 'created_at'> = { name: input.name.trim(), type: input.type };
  if (goal.name === '') problem('name', 'must not be blank');
  if (input.type === 'event') {
    if (input.path_pattern !== undefined) problem('path_pattern', 'applies to path goals only');
    if (input.event_name === undefined) problem('event_name', 'is required for event goals');
    else {
      const bad = eventNameProblem(input.event_name);
      if (bad) problem('event_name', bad);
      goal.event_name = input.event_name;
    }
    const conditions = input.property_conditions ?? [];
    const keys = new Set(conditions.map((c) => c.key));
    if (keys.size !== conditions.length) problem('property_conditions', 'must name each key once (conditions combine with AND)');
    goal.property_conditions = conditions.map((c) => ({ key: c.key, value: c.value }));
  } else {
    if (input.event_name !== undefined) problem('event_name', 'applies to event goals only');
    if (input.property_conditions && input.property_conditions.length > 0) problem('property_conditions', 'apply to event goals only');
    if (input.path_pattern === undefined) problem('path_pattern', 'is required for path goals');
    else {
      const bad = pathPatternProblem(input.path_pattern);
      if (bad) problem('path_pattern', bad);
      goal.path_pattern = input.path_pattern;
    }
  }
  if (input.revenue) {
    const currency = input.revenue.currency.toUpperCase();
    if (!CURRENCIES.has(currency)) problem('revenue.currency', 'must be an ISO 4217 currency code such as EUR or USD');
    // Only custom events carry an amount; a pageview has nothing to add up.
    if (input.type !== 'event') problem('revenue', 'applies to event goals only');
    goal.revenue = { currency };
  }
  if (problems.length > 0) throw validationFailed(problems);
  return goal;
}

interface GoalRow {
  id: string;
  site_id: string;
  name: string;
  type: MatchType;
  event_name: string | null;
  property_conditions: PropertyCondition[] | string;
  path_pattern: string | null;
  revenue_currency: string | null;
  created_at: Date | string;
}

const COLUMNS = 'id, site_id, name, type, event_name, property_conditions, path_pattern, revenue_currency, created_at';

function toGoal(row: GoalRow): Goal {
  const matcher: Partial<Goal> =
    row.type === 'event'
      ? {
          event_name: row.event_name ?? '',
          property_conditions: typeof row.property_conditions === 'string' ? JSON.parse(row.property_conditions) : row.property_conditions,
        }
      : { path_pattern: row.path_pattern ?? '' };
  return {
    id: row.id,
    site_id: row.site_id,
    name: row.name,
    type: row.type,
    ...matcher,
    ...(row.revenue_currency ? { revenue: { currency: row.revenue_currency } } : {}),
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** The team of a live site (its audit log receives the entry); 404 when the site is gone. */
/** Every goal of a site, oldest first (for matching and stats). */
export async function siteGoals(db: MetadataQueryable, siteId: string): Promise<Goal[]> {
  const { rows } = await db.query<GoalRow>(`SELECT ${COLUMNS} FROM goals WHERE site_id = $1 ORDER BY created_at, id`, [siteId]);
  return rows.map(toGoal);
}

export async function listGoals(db: MetadataQueryable, siteId: string, page: { limit: number; offset: number }): Promise<Page<Goal>> {
  const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM goals WHERE site_id = $1', [siteId]);
  const { rows } = await db.query<GoalRow>(`SELECT ${COLUMNS} FROM goals WHERE site_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`, [siteId, page.limit, page.offset]);
  const total = counted.rows[0].n;
  return pageOf(rows.map(toGoal), total, page);
}

export async function getGoal(db: MetadataQueryable, siteId: string, goalId: string): Promise<Goal> {
  const { rows } = await db.query<GoalRow>(`SELECT ${COLUMNS} FROM goals WHERE site_id = $1 AND id = $2`, [siteId, goalId]);
  if (!rows[0]) throw notFound('Goal not found');
  return toGoal(rows[0]);
}

/** A goal as its audit entry names it: its name and its site's domain at the time, its id beside. */
const audited = (goal: Pick<Goal, 'id' | 'name'>, site: AuditSite) => ({ site, subject: { type: 'goal' as const, id: goal.id, name: goal.name }, details: `goal "${goal.name}" on ${site.domain}` });

/** Two requests raced for one name: the unique index decides, and the loser gets 409 too. */
async function uniqueName<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw conflict('A goal with this name already exists on the site');
    throw err;
  }
}

async function assertNameFree(tx: MetadataQueryable, siteId: string, name: string, exceptId: string | null): Promise<void> {
  const { rows } = await tx.query('SELECT 1 FROM goals WHERE site_id = $1 AND name = $2 AND ($3::uuid IS NULL OR id <> $3)', [siteId, name, exceptId]);
  if (rows[0]) throw conflict(`A goal named "${name}" already exists on the site`);
}

/** The change's webhook event, queued in its transaction. */
const goalEvent = (tx: MetadataQueryable, type: 'goal.created' | 'goal.updated' | 'goal.deleted', goal: Goal) =>
  queueOperationalEvent(tx, type, { site_id: goal.site_id, goal_id: goal.id, name: goal.name, type: goal.type });

export async function createGoal(store: MetadataStore, actor: UserPrincipal, siteId: string, input: GoalInput): Promise<Goal> {
  const goal = checkGoal(input);
  return uniqueName(() =>
    store.transaction(async (tx) => {
      const { teamId, ...site } = await auditedSite(tx, siteId);
      const counted = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM goals WHERE site_id = $1', [siteId]);
      if (counted.rows[0].n >= MAX_GOALS_PER_SITE) throw conflict(`A site has at most ${MAX_GOALS_PER_SITE} goals; remove one first`);
      await assertNameFree(tx, siteId, goal.name, null);
      const id = randomUUID();
      const { rows } = await tx.query<GoalRow>(
        `INSERT INTO goals (id, site_id, name, type, event_name, property_conditions, path_pattern, revenue_currency)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8) RETURNING ${COLUMNS}`,
        [id, siteId, goal.name, goal.type, goal.event_name ?? null, JSON.stringify(goal.property_conditions ?? []), goal.path_pattern ?? null, goal.revenue?.currency ?? null],
      );
      const created = toGoal(rows[0]);
      await writeAudit(tx, { teamId, action: 'goal.created', actor, ...audited(created, site) });
      await goalEvent(tx, 'goal.created', created);
      return created;
    }),
  );
}

/**
 * Applies a partial change. Changing the type drops the old type's matcher, so the new one must
 * be given; `null` clears revenue or the property conditions. Unchanged input changes nothing.
 */
export async function updateGoal(store: MetadataStore, actor: UserPrincipal, siteId: string, goalId: string, changes: GoalChanges): Promise<{ goal: Goal; changed: boolean }> {
  return uniqueName(() =>
    store.transaction(async (tx) => {
      const { teamId, ...site } = await auditedSite(tx, siteId);
      const before = await getGoal(tx, siteId, goalId);
      const type = changes.type ?? before.type;
      // Revenue is an event goal's setting, so it goes with the event matcher on a change of type.
      const kept: GoalInput = type === before.type ? { ...before } : { name: before.name, type };
      const merged: GoalInput = { ...kept, ...definedOnly(changes), type };
      const goal = checkGoal(merged);
      const same = JSON.stringify(comparable(goal)) === JSON.stringify(comparable(before));
      if (same) return { goal: before, changed: false };
      if (goal.name !== before.name) await assertNameFree(tx, siteId, goal.name, goalId);
      const { rows } = await tx.query<GoalRow>(
        `UPDATE goals SET name = $3, type = $4, event_name = $5, property_conditions = $6::jsonb, path_pattern = $7, revenue_currency = $8, updated_at = now()
          WHERE site_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
        [siteId, goalId, goal.name, goal.type, goal.event_name ?? null, JSON.stringify(goal.property_conditions ?? []), goal.path_pattern ?? null, goal.revenue?.currency ?? null],
      );
      const updated = toGoal(rows[0]);
      await writeAudit(tx, { teamId, action: 'goal.updated', actor, ...audited(updated, site) });
      await goalEvent(tx, 'goal.updated', updated);
      return { goal: updated, changed: true };
    }),
  );
}

export async function deleteGoal(store: MetadataStore, actor: UserPrincipal, siteId: string, goalId: string): Promise<Goal> {
  return store.transaction(async (tx) => {
    const { teamId, ...site } = await auditedSite(tx, siteId);
    const goal = await getGoal(tx, siteId, goalId);
    await tx.query('DELETE FROM goals WHERE site_id = $1 AND id = $2', [siteId, goalId]);
    await writeAudit(tx, { teamId, action: 'goal.deleted', actor, ...audited(goal, site) });
    await goalEvent(tx, 'goal.deleted', goal);
    return goal;
  });
}

/** A PATCH body without the keys it left out (undefined never overwrites a stored value). */
function definedOnly<T extends object>(changes: T): Partial<T> {
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<T>;
}

const comparable = (goal: Omit<Goal, 'id' | 'site_id' | 'created_at'>) => [
  goal.name,
  goal.type,
  goal.event_name ?? null,
  goal.property_conditions ?? [],
  goal.path_pattern ?? null,
  goal.revenue?.currency ?? null,
];
