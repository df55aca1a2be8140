// A person's own account data as one download: profile, teams and sites with their roles, API
// clients, sign-in methods and the audit entries about them. Nothing that lets anyone sign in or
// call the API is in it: no password hash, TOTP secret, recovery code, token or token hash, and
// of a passkey only its name and dates (its key material stays with the account), of a linked
// sign-in provider only which one, its address and dates.
import type { UserPrincipal } from '../auth/sessions.ts';
import { listSites } from '../sites/sites-admin.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { writeInstanceAudit } from '../users/admin.ts';
import type { ExportFormat } from './exports.ts';
import { isoSql, metadataTable, type TakeoutDownload } from './site-takeout.ts';
import { type RowsTable, takeoutFileName, writeTakeout } from './takeout.ts';

/** Sites read a page at a time (listSites' limit). */
const SITE_PAGE = 100;

async function accountTables(db: MetadataQueryable, user: UserPrincipal): Promise<RowsTable[]> {
  const params = [user.id];
  const sites: RowsTable = {
    name: 'sites',
    columns: [
      { name: 'id', type: 'uuid' },
      { name: 'domain', type: 'string' },
      { name: 'team_id', type: 'uuid' },
      { name: 'timezone', type: 'string' },
      { name: 'role', type: 'string' },
    ],
    rows: [],
  };
  const siteRows: (string | null)[][] = [];
  for (let offset = 0; ; offset += SITE_PAGE) {
    const page = await listSites(db, { user }, { limit: SITE_PAGE, offset });
    for (const site of page.items) siteRows.push([site.id, site.domain, site.team_id, site.timezone, site.role]);
    if (page.items.length < SITE_PAGE) break;
  }
  return [
    await metadataTable(
      db,
      'profile',
      [
        ['id', 'uuid', 'id::text'],
        ['email', 'string', 'email'],
        ['role', 'string', 'role'],
        ['created_at', 'timestamp', isoSql('created_at')],
        ['updated_at', 'timestamp', isoSql('updated_at')],
      ],
      'FROM users WHERE id = $1',
      params,
    ),
    await metadataTable(
      db,
      'teams',
      [
        ['id', 'uuid', 't.id::text'],
        ['name', 'string', 't.name'],
        ['role', 'string', 'tm.role'],
        ['joined_at', 'timestamp', isoSql('tm.created_at')],
        ['archived_at', 'timestamp', isoSql('t.archived_at')],
      ],
      'FROM team_members tm JOIN teams t ON t.id = tm.team_id WHERE tm.user_id = $1 ORDER BY t.name, t.id',
      params,
    ),
    { ...sites, rows: siteRows },
    await metadataTable(
      db,
      'api_clients',
      [
        ['id', 'uuid', 'c.id::text'],
        ['name', 'string', 'c.name'],
        ['scopes', 'json', 'to_json(c.scopes)::text'],
        ['sites', 'json', `(SELECT coalesce(json_agg(json_build_object('site_id', cs.site_id, 'role', cs.role) ORDER BY cs.site_id), '[]'::json)::text FROM api_client_sites cs WHERE cs.api_client_id = c.id)`],
        ['expires_at', 'timestamp', isoSql('c.expires_at')],
        ['revoked_at', 'timestamp', isoSql('c.revoked_at')],
        ['last_used_at', 'timestamp', isoSql('c.last_used_at')],
        ['created_at', 'timestamp', isoSql('c.created_at')],
      ],
      'FROM api_clients c WHERE c.owner_user_id = $1 ORDER BY c.created_at, c.id',
      params,
    ),
    await metadataTable(
      db,
      'sign_in',
      [
        ['password_set', 'boolean', 'password_hash IS NOT NULL'],
        ['totp_enabled', 'boolean', 'totp_enabled_at IS NOT NULL'],
        ['totp_enabled_at', 'timestamp', isoSql('totp_enabled_at')],
        ['recovery_codes_left', 'integer', '(SELECT count(*)::int FROM recovery_codes r WHERE r.user_id = users.id AND r.used_at IS NULL)'],
        ['passkeys', 'integer', '(SELECT count(*)::int FROM passkeys p WHERE p.user_id = users.id)'],
      ],
      'FROM users WHERE id = $1',
      params,
    ),
    await metadataTable(
      db,
      'passkeys',
      [
        ['id', 'uuid', 'id::text'],
        ['name', 'string', 'name'],
        ['created_at', 'timestamp', isoSql('created_at')],
        ['last_used_at', 'timestamp', isoSql('last_used_at')],
      ],
      'FROM passkeys WHERE user_id = $1 ORDER BY created_at, id',
      params,
    ),
    await metadataTable(
      db,
      'sign_in_providers',
      [
        ['provider', 'string', 'provider'],
        ['email', 'string', 'email'],
        ['created_at', 'timestamp', isoSql('created_at')],
        ['last_used_at', 'timestamp', isoSql('last_used_at')],
      ],
      'FROM user_identities WHERE user_id = $1 ORDER BY created_at, provider',
      params,
    ),
    // Team entries and instance entries in one list, newest first, each saying which log it is from.
    await metadataTable(
      db,
      'audit',
      [
        ['log', 'string', 'log'],
        ['team_id', 'uuid', 'team_id'],
        ['action', 'string', 'action'],
        ['actor_email', 'string', 'actor_email'],
        ['target_email', 'string', 'target_email'],
        ['site_domain', 'string', 'site_domain'],
        ['subject_type', 'string', 'subject_type'],
        ['subject_name', 'string', 'subject_name'],
        ['details', 'string', 'details'],
        ['created_at', 'timestamp', isoSql('created_at')],
      ],
      `FROM (SELECT 'team' AS log, team_id::text AS team_id, action, actor_email, target_email, site_domain, subject_type, subject_name, details, created_at
               FROM audit_log WHERE actor_user_id = $1 OR target_user_id = $1
             UNION ALL
             SELECT 'instance', NULL, action, actor_email, target_email, NULL, NULL, NULL, details, created_at
               FROM instance_audit_log WHERE actor_user_id = $1 OR target_user_id = $1) AS entries
       ORDER BY created_at DESC`,
      params,
    ),
  ];
}

/** The account's takeout as a download; its audit entry is written first (instance log, about the person). */
export async function accountTakeout(deps: { metadata: MetadataQueryable; analytics: AnalyticsStore }, user: UserPrincipal, format: ExportFormat, now = new Date()): Promise<TakeoutDownload> {
  const tables = await accountTables(deps.metadata, user);
  await writeInstanceAudit(deps.metadata, { action: 'user.takeout', actor: user, target: user, details: `took out their account data as ${format}` });
  const body = writeTakeout(deps.analytics, { kind: 'plumb-account-takeout', format, user: { id: user.id, email: user.email }, tables, now });
  return { body, fileName: takeoutFileName(user.email, format, now) };
}
