// The goals and funnels an import adds to its site (a takeout carries its site's). Each is created
// as the person who created the import would create it (audit entry, goal.created webhook), and
// its id is recorded on the import at once, so that deleting the import, a failed run, or the next
// leader cleaning up after one that died removes exactly what was added, and nothing the site had.
import type { UserPrincipal } from '../auth/sessions.ts';
import { type FunnelInput, createFunnel, deleteFunnel } from '../funnels/funnels.ts';
import { createGoal, deleteGoal, type GoalInput } from '../goals/goals.ts';
import { PlumbError } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import type { SiteSetup } from './source.ts';

/**
 * Adds goals and funnels for the import. `record` writes an added id onto the import (fenced by
 * the caller's leadership); when it cannot, the goal or funnel just made is removed again.
 */
export function importSetup(
  db: MetadataStore,
  actor: UserPrincipal,
  siteId: string,
  record: (column: 'created_goals' | 'created_funnels', id: string) => Promise<void>,
): SiteSetup {
  const named = async (table: 'goals' | 'funnels', name: string) =>
    (await db.query(`SELECT 1 FROM ${table} WHERE site_id = $1 AND lower(name) = lower($2)`, [siteId, name.trim()])).rowCount > 0;
  return {
    async addGoal(goal: GoalInput) {
      if (await named('goals', goal.name)) return 'exists';
      const created = await createGoal(db, actor, siteId, goal);
      await record('created_goals', created.id).catch(async (error: unknown) => {
        await deleteGoal(db, actor, siteId, created.id).catch(() => undefined);
        throw error;
      });
      return 'created';
    },
    async addFunnel(funnel: FunnelInput) {
      if (await named('funnels', funnel.name)) return 'exists';
      const created = await createFunnel(db, actor, siteId, funnel);
      await record('created_funnels', created.id).catch(async (error: unknown) => {
        await deleteFunnel(db, actor, siteId, created.id).catch(() => undefined);
        throw error;
      });
      return 'created';
    },
  };
}

/** The person an import acts as: the one who created it (their account may be gone: then nobody, and nothing is added). */
export async function importActor(db: MetadataQueryable, userId: string): Promise<UserPrincipal | null> {
  const { rows } = await db.query<UserPrincipal>('SELECT id, email, role FROM users WHERE id = $1', [userId]);
  return rows[0] ?? null;
}

/** Removes the goals and funnels the import added that still exist, and forgets them. */
export async function removeImportSetup(db: MetadataStore, actor: UserPrincipal | null, siteId: string, importId: string): Promise<void> {
  const { rows } = await db.query<{ created_goals: string[]; created_funnels: string[] }>('SELECT created_goals, created_funnels FROM imports WHERE id = $1', [importId]);
  const created = rows[0];
  if (!created) return;
  await removeSetup(db, actor, siteId, created.created_goals, created.created_funnels);
  await db.query("UPDATE imports SET created_goals = '{}', created_funnels = '{}' WHERE id = $1", [importId]);
}

/**
 * Deletes the listed goals and funnels of the site; one already gone is skipped. As the given
 * person (audit entries, webhooks) when there is one; quietly when their account is gone.
 */
export async function removeSetup(db: MetadataStore, actor: UserPrincipal | null, siteId: string, goalIds: readonly string[], funnelIds: readonly string[]): Promise<void> {
  if (!actor) {
    await db.query('DELETE FROM goals WHERE site_id = $1 AND id = ANY($2::uuid[])', [siteId, goalIds]);
    await db.query('DELETE FROM funnels WHERE site_id = $1 AND id = ANY($2::uuid[])', [siteId, funnelIds]);
    return;
  }
  const gone = (error: unknown) => {
    if (!(error instanceof PlumbError && Number(error.code) === 404)) throw error;
  };
  for (const id of goalIds) await deleteGoal(db, actor, siteId, id).catch(gone);
  for (const id of funnelIds) await deleteFunnel(db, actor, siteId, id).catch(gone);
}
