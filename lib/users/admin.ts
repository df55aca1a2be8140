// Instance user administration (instance owners and admins): list, create, change role, reset MFA,
// delete. Admins look after plain users only; owners and admins are an owner's business, so an
// admin can neither promote themselves nor lock an owner out. The instance never loses its last owner.
import { enqueueMail } from '../mail/outbox.ts';
import { randomUUID } from 'node:crypto';
import type { InstanceRole } from '../auth/roles.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import { createUser } from './users.ts';
import { pageOf } from '../pagination.ts';

export interface UserView {
  id: string;
  email: string;
  role: InstanceRole;
  totp_enabled: boolean;
  created_at: string;
}

interface UserRow {
  id: string;
  email: string;
  role: InstanceRole;
  totp_enabled: boolean;
  created_at: Date | string;
}

const COLUMNS = 'id, email, role, totp_enabled_at IS NOT NULL AS totp_enabled, created_at';
const toView = (row: UserRow): UserView => ({ ...row, created_at: new Date(row.created_at).toISOString() });

export async function listUsers(db: MetadataQueryable, page: { limit: number; offset: number }) {
  const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM users ORDER BY created_at, id LIMIT $1 OFFSET $2`, [page.limit, page.offset]);
  const { rows: counted } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
  const total = counted[0].n;
  return pageOf(rows.map(toView), total, page);
}

/** Instance-level audit entry (see migration 0007); written inside the change's transaction. */
export async function writeInstanceAudit(
  db: MetadataQueryable,
  entry: { action: string; actor: Pick<UserPrincipal, 'id' | 'email'>; target?: { id?: string; email?: string }; details?: string },
): Promise<void> {
  await db.query(
    `INSERT INTO instance_audit_log (id, action, actor_user_id, actor_email, target_user_id, target_email, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [randomUUID(), entry.action, entry.actor.id, entry.actor.email, entry.target?.id ?? null, entry.target?.email ?? null, entry.details ?? ''],
  );
}

/** The change's webhook event, queued in its transaction (the account's state as the change left it). */
export const userEvent = (tx: MetadataQueryable, type: 'system.user.updated' | 'system.user.deleted', user: UserView) =>
  queueOperationalEvent(tx, type, { user_id: user.id, email: user.email, role: user.role });

/** Owners manage everyone; admins only accounts that are, and stay, plain users. */
function mayManage(actor: UserPrincipal, ...roles: InstanceRole[]): void {
  if (actor.role === 'owner') return;
  if (roles.some((r) => r !== 'user')) throw forbidden('Only an instance owner can manage owners and administrators');
}

/** Loads the target row locked for the rest of the transaction, or 404. */
async function lockedTarget(tx: MetadataQueryable, id: string): Promise<UserView> {
  const { rows } = await tx.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE id = $1 FOR UPDATE`, [id]);
  if (!rows[0]) throw notFound('User not found');
  return toView(rows[0]);
}

/**
 * Refuses a change that would leave no owner. Every owner row is locked first, so two owners
 * demoting each other at once are serialised and the second sees the first's result.
 */
async function keepAnOwner(tx: MetadataQueryable, target: UserView): Promise<void> {
  if (target.role !== 'owner') return;
  const { rows } = await tx.query<{ id: string }>("SELECT id FROM users WHERE role = 'owner' FOR UPDATE");
  if (rows.filter((r) => r.id !== target.id).length === 0) throw conflict('The instance must keep at least one owner');
}

export async function adminCreateUser(db: MetadataStore, actor: UserPrincipal, input: { email: string; password: string; role: InstanceRole }): Promise<UserView> {
  mayManage(actor, input.role);
  return db.transaction(async (tx) => {
    const user = await createUser(tx, input);
    await writeInstanceAudit(tx, { action: 'user.created', actor, target: user, details: `role ${user.role}` });
    const { rows } = await tx.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [user.id]);
    const created = toView(rows[0]);
    await userEvent(tx, 'system.user.updated', created);
    return created;
  });
}

/** Returns the user and whether anything changed (the same role again is a no-op). */
export async function changeRole(db: MetadataStore, actor: UserPrincipal, id: string, role: InstanceRole): Promise<{ user: UserView; changed: boolean }> {
  return db.transaction(async (tx) => {
    const target = await lockedTarget(tx, id);
    mayManage(actor, target.role, role);
    if (target.role === role) return { user: target, changed: false };
    if (role !== 'owner') await keepAnOwner(tx, target);
    await tx.query('UPDATE users SET role = $2, updated_at = now() WHERE id = $1', [id, role]);
    await writeInstanceAudit(tx, { action: 'user.role_changed', actor, target, details: `${target.role} → ${role}` });
    const user = { ...target, role };
    await userEvent(tx, 'system.user.updated', user);
    return { user, changed: true };
  });
}

/** Clears the TOTP enrolment (secret, pending secret, replay step) and every recovery code. */
export async function disableMfa(db: MetadataStore, actor: UserPrincipal, id: string): Promise<UserView> {
  return db.transaction(async (tx) => {
    const target = await lockedTarget(tx, id);
    mayManage(actor, target.role);
    await tx.query(
      `UPDATE users SET totp_secret = NULL, totp_pending_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL, updated_at = now()
        WHERE id = $1`,
      [id],
    );
    await tx.query('DELETE FROM recovery_codes WHERE user_id = $1', [id]);
    await writeInstanceAudit(tx, { action: 'user.mfa_disabled', actor, target });
    if (target.totp_enabled) await enqueueMail(tx, { to: target.email, template: 'totp_disabled', params: { disabled_at: new Date().toISOString(), by_admin: true } });
    const user = { ...target, totp_enabled: false };
    await userEvent(tx, 'system.user.updated', user);
    return user;
  });
}

/**
 * Deletes the account; its memberships, remember-me tokens, passkeys and API clients go with it
 * (foreign keys cascade). Teams it owned stay, administered by the instance owners and admins.
 */
export async function deleteUser(db: MetadataStore, actor: UserPrincipal, id: string): Promise<UserView> {
  if (actor.id === id) throw conflict('You cannot delete your own account');
  return db.transaction(async (tx) => {
    const target = await lockedTarget(tx, id);
    mayManage(actor, target.role);
    await keepAnOwner(tx, target);
    await tx.query('DELETE FROM users WHERE id = $1', [id]);
    await writeInstanceAudit(tx, { action: 'user.deleted', actor, target, details: `role ${target.role}` });
    await userEvent(tx, 'system.user.deleted', target);
    return target;
  });
}
