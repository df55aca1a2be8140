// A site's takeout: its settings, goals, funnels and share links (read from the metadata store,
// without a token hash, password hash or other secret) and every analytics table of the site over
// its whole history (lib/exports/takeout-tables.ts), as one download.
import type { Readable } from 'node:stream';
import type { UserPrincipal } from '../auth/sessions.ts';
import { writeAudit } from '../audit/audit.ts';
import type { Site } from '../sites/sites.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import type { ExportFormat } from './exports.ts';
import { type RowsTable, type TakeoutTable, takeoutFileName, writeTakeout } from './takeout.ts';
import { ANALYTICS_TAKEOUT_TABLES, type TakeoutColumn, type TakeoutType, takeoutSliceQuery, timeOf } from './takeout-tables.ts';
import type { CellValue } from './xlsx.ts';

/** A timestamp column of PostgreSQL as the takeout writes it: ISO 8601 UTC text. */
export const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A metadata table of the takeout: the SELECT list (one expression a column) and its types. */
export async function metadataTable(db: MetadataQueryable, name: string, spec: readonly [column: string, type: TakeoutType, sql: string][], from: string, params: unknown[]): Promise<RowsTable> {
  const { rows } = await db.query<Record<string, CellValue>>(`SELECT ${spec.map(([column, , sql]) => `${sql} AS ${column}`).join(', ')} ${from}`, params);
  const columns: TakeoutColumn[] = spec.map(([column, type]) => ({ name: column, type }));
  return { name, columns, rows: rows.map((row) => columns.map((c) => row[c.name] ?? null)) };
}

/** A site's goals as the takeout writes them (and the Plumb import source reads them back). */
export const GOAL_COLUMNS: readonly [column: string, type: TakeoutType, sql: string][] = [
  ['id', 'uuid', 'id::text'],
  ['name', 'string', 'name'],
  ['type', 'string', 'type'],
  ['event_name', 'string', 'event_name'],
  ['property_conditions', 'json', 'property_conditions::text'],
  ['path_pattern', 'string', 'path_pattern'],
  ['revenue_currency', 'string', 'revenue_currency'],
  ['created_at', 'timestamp', isoSql('created_at')],
  ['updated_at', 'timestamp', isoSql('updated_at')],
];

/** A site's funnels as the takeout writes them (steps as JSON text). */
export const FUNNEL_COLUMNS: readonly [column: string, type: TakeoutType, sql: string][] = [
  ['id', 'uuid', 'id::text'],
  ['name', 'string', 'name'],
  ['steps', 'json', 'steps::text'],
  ['window_seconds', 'integer', 'window_seconds'],
  ['created_at', 'timestamp', isoSql('created_at')],
  ['updated_at', 'timestamp', isoSql('updated_at')],
];

async function siteTables(db: MetadataQueryable, siteId: string): Promise<RowsTable[]> {
  const params = [siteId];
  return [
    await metadataTable(
      db,
      'site',
      [
        ['id', 'uuid', 's.id::text'],
        ['domain', 'string', 's.domain'],
        ['timezone', 'string', 's.timezone'],
        ['hostnames', 'json', 'to_json(ARRAY(SELECT h.hostname FROM site_hostnames h WHERE h.site_id = s.id ORDER BY h.hostname))::text'],
        ['team_id', 'uuid', 's.team_id::text'],
        ['created_at', 'timestamp', isoSql('s.created_at')],
      ],
      'FROM sites s WHERE s.id = $1',
      params,
    ),
    await metadataTable(db, 'goals', GOAL_COLUMNS, 'FROM goals WHERE site_id = $1 ORDER BY created_at, id', params),
    await metadataTable(db, 'funnels', FUNNEL_COLUMNS, 'FROM funnels WHERE site_id = $1 ORDER BY created_at, id', params),
    // The link's token and password are secrets (only their hashes are stored, and those stay here).
    await metadataTable(
      db,
      'share_links',
      [
        ['id', 'uuid', 'id::text'],
        ['name', 'string', 'name'],
        ['password_protected', 'boolean', 'password_hash IS NOT NULL'],
        ['embed_origins', 'json', 'to_json(embed_origins)::text'],
        ['expires_at', 'timestamp', isoSql('expires_at')],
        ['created_by', 'uuid', 'created_by::text'],
        ['created_at', 'timestamp', isoSql('created_at')],
        ['revoked_at', 'timestamp', isoSql('revoked_at')],
      ],
      'FROM share_links WHERE site_id = $1 ORDER BY created_at, id',
      params,
    ),
  ];
}

export interface TakeoutDownload {
  body: Readable;
  fileName: string;
}

/**
 * The site's takeout as a download, after writing its audit entry (a takeout copies the whole
 * site out, so who took one and when is on record, even if the download is then abandoned).
 */
export async function siteTakeout(
  deps: { metadata: MetadataQueryable; analytics: AnalyticsStore },
  actor: Pick<UserPrincipal, 'id' | 'email'>,
  site: Site,
  format: ExportFormat,
  options: { now?: Date; maxSheetRows?: number } = {},
): Promise<TakeoutDownload> {
  const now = options.now ?? new Date();
  const params = { db: site.tenant, site: site.id };
  const analytics: TakeoutTable[] = ANALYTICS_TAKEOUT_TABLES.map((table) => ({
    name: table.name,
    columns: table.columns,
    sql: takeoutSliceQuery(table, false),
    parquetSql: takeoutSliceQuery(table, true),
    params,
    slices: { table: table.table, time: timeOf(table) },
  }));
  const tables = [...(await siteTables(deps.metadata, site.id)), ...analytics];
  await writeAudit(deps.metadata, { teamId: site.team_id, action: 'site.takeout', actor, site: { id: site.id, domain: site.domain }, details: `took out ${site.domain} as ${format}` });
  const body = writeTakeout(deps.analytics, {
    kind: 'plumb-takeout',
    format,
    site: { id: site.id, domain: site.domain, timezone: site.timezone },
    tables,
    now,
    maxSheetRows: options.maxSheetRows,
  });
  return { body, fileName: takeoutFileName(site.domain, format, now) };
}
