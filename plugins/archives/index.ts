// The archives plugin (`-plugins archives`): scheduled backups of both stores to a directory or an
// S3-compatible bucket, per-site retention that moves old analytics rows into Parquet archives
// there, and (`plumb restore`, restore.ts) bringing a backup back whole. Written against the
// plugin API; its one power beyond it is the archive capability, which copies every table.
import { fileURLToPath } from 'node:url';
import { action, conflict, DateTime, definePlugin, NoContent, notFound, nullable, object, PLUGIN_API_VERSION, stringEnum, Type } from '../../lib/plugins/api.ts';
import { deleteBackup, formatBytes } from './backup.ts';
import { backupJob, retentionJob } from './jobs.ts';
import { BACKUP_ID, newBackupId } from './manifest.ts';
import { type ArchiveTarget, localTarget, parseLocation, s3Target } from './targets.ts';

/** The S3 settings a target needs besides its location. */
export interface S3Settings {
  s3_endpoint?: string;
  s3_region: string;
  s3_path_style: boolean;
  s3_access_key_id?: string;
  s3_secret_access_key?: string;
}

/** A directory or `s3://bucket/prefix`, opened with the plugin's S3 settings. */
export function openTarget(location: string, settings: S3Settings): ArchiveTarget {
  const where = parseLocation(location);
  if (where.kind === 'dir') return localTarget(where.dir);
  return s3Target({
    bucket: where.bucket,
    prefix: where.prefix,
    endpoint: settings.s3_endpoint,
    region: settings.s3_region,
    forcePathStyle: settings.s3_path_style,
    accessKeyId: settings.s3_access_key_id,
    secretAccessKey: settings.s3_secret_access_key,
  });
}

const Backup = object({
  id: Type.String(),
  status: stringEnum(['requested', 'running', 'completed', 'failed']),
  location: Type.String(),
  requested_by: nullable(Type.String()),
  started_at: nullable(DateTime),
  finished_at: nullable(DateTime),
  bytes: Type.Integer(),
  size: Type.String({ description: 'bytes, for people: "12.3 MiB"' }),
  rows: Type.Integer(),
  files: Type.Integer(),
  error: nullable(Type.String()),
});
const Retention = object({
  retention_days: nullable(Type.Integer({ minimum: 1, maximum: 36_500 })),
  archived_rows: Type.Integer({ description: 'Rows of the site moved into archives so far' }),
  last_archived_at: nullable(DateTime),
});

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const BACKUP_COLUMNS = `id, status, location, requested_by, ${iso('started_at')} AS started_at, ${iso('finished_at')} AS finished_at, bytes::float8 AS bytes, rows::float8 AS rows, files, error`;
type BackupRow = Omit<typeof Backup.static, 'size'>;

export default definePlugin({
  name: 'archives',
  version: '1.0.0',
  apiVersion: PLUGIN_API_VERSION,
  description: 'Scheduled backups of both stores, per-site data retention into Parquet archives, and plumb restore',
  capabilities: ['archive'],
  settings: {
    target: { type: 'string', required: true, description: 'Where backups and retention archives go: a directory, or s3://bucket/prefix.' },
    interval_minutes: { type: 'int', default: 1440, min: 1, max: 43_200, description: 'Minutes between scheduled backups (the first runs at start when there is none).' },
    keep: { type: 'int', default: 7, min: 1, max: 1000, description: 'Complete backups kept; older ones are deleted after each new one.' },
    retention_interval_minutes: { type: 'int', default: 60, min: 1, max: 10_080, description: 'Minutes between retention runs (a site whose retention changes is handled within seconds).' },
    staging_dir: { type: 'string', description: 'Folder where files are staged on their way to the target (default: the system temporary folder); needs room for the largest table.' },
    include_secret: {
      type: 'bool',
      default: true,
      description:
        'Put the instance secret (it signs sessions and seals authenticator seeds and webhook secrets) in each backup, so a restore is whole. Off: keep it yourself; a restore then needs the same PLUMB_JWT_SECRET.',
    },
    s3_endpoint: { type: 'url', schemes: ['http:', 'https:'], description: 'S3-compatible endpoint (MinIO, R2, …); unset for AWS S3.' },
    s3_region: { type: 'string', default: 'us-east-1', description: 'S3 region.' },
    s3_path_style: { type: 'bool', default: false, description: 'Address the bucket in the path (most S3-compatible servers need it).' },
    s3_access_key_id: { type: 'string', description: 'S3 access key id (unset: the AWS SDK’s default credential chain).' },
    s3_secret_access_key: { type: 'string', secret: true, description: 'S3 secret access key.' },
  },
  scopes: [{ name: 'archives:retention', description: 'Read and change the data retention of the token’s sites (site admins)' }],
  metadataMigrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  webhookEvents: [
    {
      type: 'archives.backup.completed',
      scope: 'instance',
      description: 'A backup of the instance completed',
      fields: ['backup_id', 'location', 'files', 'bytes', 'rows', 'started_at', 'completed_at'],
    },
    { type: 'archives.backup.failed', scope: 'instance', description: 'A backup of the instance failed', fields: ['backup_id', 'location', 'error', 'started_at'] },
  ],
  dashboard: {
    adminPage: {
      title: 'Backups',
      navLabel: 'Backups',
      actions: [{ id: 'backup-now', label: 'Back up now', path: '/backups' }],
      panels: [
        {
          id: 'summary',
          title: 'Backups kept',
          kind: 'kpis',
          path: '/summary',
          // A backup asked for with the page's button finishes within seconds: the page follows it.
          refreshSeconds: 5,
          kpis: [
            { key: 'completed', label: 'Complete backups' },
            { key: 'last_rows', label: 'Rows in the last' },
            { key: 'last_bytes', label: 'Size of the last', format: 'bytes' },
          ],
        },
        {
          id: 'backups',
          title: 'Backups',
          kind: 'table',
          path: '/backups',
          items: 'backups',
          refreshSeconds: 5,
          // Every backup goes to the one target, so its location is not a column.
          columns: [
            { key: 'started_at', label: 'Started', format: 'datetime' },
            { key: 'status', label: 'Status' },
            { key: 'bytes', label: 'Size', numeric: true, format: 'bytes' },
            { key: 'rows', label: 'Rows', numeric: true },
            { key: 'error', label: 'Error' },
          ],
          rowActions: [{ id: 'delete', label: 'Delete', method: 'DELETE', path: '/backups/{id}', confirm: 'Delete this backup and its files? It cannot be restored afterwards.', danger: true }],
          empty: 'No backup yet.',
        },
      ],
    },
    siteSettings: [
      {
        id: 'retention',
        title: 'Data retention',
        description:
          'Analytics older than this many days are written to Parquet archives in the backup target, checked, and then deleted from Plumb. Leave empty to keep everything.',
        path: '/retention',
        schema: {
          type: 'object',
          properties: {
            retention_days: { type: 'integer', title: 'Keep analytics for (days)', minimum: 1, maximum: 36_500, nullable: true },
            archived_rows: { type: 'integer', title: 'Rows archived so far', readOnly: true, format: 'number' },
            last_archived_at: { type: 'string', title: 'Last archived', readOnly: true, format: 'datetime' },
          },
        },
      },
    ],
  },

  systemStatus(host) {
    return async () => {
      const { rows } = await host.metadata.query<{ completed: number; last_at: string | null; last_bytes: number | null; last_failed_at: string | null }>(
        `SELECT (SELECT count(*)::int FROM backups WHERE status = 'completed') AS completed,
                (SELECT ${iso('max(finished_at)')} FROM backups WHERE status = 'completed') AS last_at,
                (SELECT bytes::float8 FROM backups WHERE status = 'completed' ORDER BY finished_at DESC LIMIT 1) AS last_bytes,
                (SELECT ${iso('max(finished_at)')} FROM backups WHERE status = 'failed') AS last_failed_at`,
      );
      const row = rows[0];
      return [
        { label: 'Last complete backup', value: row.last_at, format: 'datetime' },
        { label: 'Its size', value: row.last_bytes, format: 'bytes' },
        { label: 'Complete backups kept', value: row.completed, format: 'number' },
        { label: 'Last failed backup', value: row.last_failed_at, format: 'datetime' },
      ];
    };
  },
  leaderJobs(host) {
    const target = () => openTarget(host.settings.target, host.settings);
    return [
      { name: 'backups', job: backupJob(host, target) },
      { name: 'retention', job: retentionJob(host, target) },
    ];
  },

  services(host) {
    const tags = ['plugin: archives'];
    const { settings } = host;
    const backupOf = (row: BackupRow) => ({ ...row, size: formatBytes(row.bytes) });
    return [
      {
        name: 'plugins.archives',
        settings: { rest: '/' },
        actions: {
          list: action({
            rest: 'GET /api/plugins/archives/backups',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: { summary: 'The last 100 backups, newest first, with their status (instance administrators)', tags, response: object({ backups: Type.Array(Backup) }) },
            async handler() {
              const { rows } = await host.metadata.query<BackupRow>(`SELECT ${BACKUP_COLUMNS} FROM backups ORDER BY created_at DESC, id DESC LIMIT 100`);
              return { backups: rows.map(backupOf) };
            },
          }),

          summary: action({
            rest: 'GET /api/plugins/archives/summary',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: {
              summary: 'How many complete backups there are, and the rows and bytes of the last (instance administrators)',
              tags,
              response: object({ completed: Type.Integer(), last_rows: Type.Integer(), last_bytes: Type.Integer(), last_completed_at: nullable(DateTime) }),
            },
            async handler() {
              const { rows } = await host.metadata.query<{ completed: number; last_rows: number | null; last_bytes: number | null; last_completed_at: string | null }>(
                `SELECT (SELECT count(*)::int FROM backups WHERE status = 'completed') AS completed, l.rows::float8 AS last_rows, l.bytes::float8 AS last_bytes,
                        ${iso('l.finished_at')} AS last_completed_at
                   FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT * FROM backups WHERE status = 'completed' ORDER BY finished_at DESC LIMIT 1) l ON true`,
              );
              const row = rows[0];
              return {
                completed: row.completed,
                last_rows: row.last_rows ?? 0,
                last_bytes: row.last_bytes ?? 0,
                last_completed_at: row.last_completed_at,
              };
            },
          }),

          request: action({
            rest: 'POST /api/plugins/archives/backups',
            location: '/api/plugins/archives/backups',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: {
              summary: 'Back up now: the leader starts within seconds (instance administrators); 409 while one is asked for or running',
              tags,
              successStatus: 202,
              response: object({ message: Type.String(), backup: Backup }),
              errors: [409],
            },
            async handler(ctx) {
              const user = (ctx.meta as { user?: { email: string } }).user;
              try {
                const { rows } = await host.metadata.query<BackupRow>(
                  `INSERT INTO backups (id, status, location, requested_by) VALUES ($1, 'requested', $2, $3) RETURNING ${BACKUP_COLUMNS}`,
                  [newBackupId(new Date()), openTarget(settings.target, settings).location, user?.email ?? null],
                );
                (ctx.meta as { $statusCode?: number }).$statusCode = 202;
                return { message: 'Backup requested: it starts within a few seconds.', backup: backupOf(rows[0]) };
              } catch (err) {
                if ((err as { code?: string }).code === '23505') throw conflict('A backup is already asked for or running; wait for it to finish.');
                throw err;
              }
            },
          }),

          remove: action({
            rest: 'DELETE /api/plugins/archives/backups/:backupId',
            auth: 'user',
            access: { instance: 'admin' },
            params: { backupId: { type: 'string', pattern: BACKUP_ID } },
            openapi: { summary: 'Delete a backup and its files (instance administrators); 409 while it runs', tags, successStatus: 204, response: NoContent, errors: [404, 409] },
            async handler(ctx) {
              const { backupId } = ctx.params as { backupId: string };
              const { rows } = await host.metadata.query<{ status: string }>('SELECT status FROM backups WHERE id = $1', [backupId]);
              if (!rows[0]) throw notFound('Backup not found');
              if (rows[0].status === 'running') throw conflict('This backup is running; it can be deleted once it has finished.');
              // Files first: a row left without files is harmless, files left without a row would be forgotten.
              await deleteBackup(openTarget(settings.target, settings), backupId);
              await host.metadata.query('DELETE FROM backups WHERE id = $1', [backupId]);
              (ctx.meta as { $statusCode?: number }).$statusCode = 204;
              return null;
            },
          }),

          retention: action({
            rest: 'GET /api/sites/:id/plugins/archives/retention',
            auth: 'any',
            access: { site: { param: 'id', role: 'admin', scope: 'archives:retention' } },
            params: { id: 'uuid' },
            openapi: { summary: 'The site’s data retention, and what it has archived so far (site admins)', tags, response: Retention, errors: [404] },
            async handler(ctx) {
              return retentionOf(ctx.params.id as string);
            },
          }),

          setRetention: action({
            rest: 'PUT /api/sites/:id/plugins/archives/retention',
            auth: 'any',
            access: { site: { param: 'id', role: 'admin', scope: 'archives:retention' } },
            params: { id: 'uuid', retention_days: { type: 'number', integer: true, min: 1, max: 36_500, nullable: true } },
            openapi: { summary: 'Change how long the site’s analytics are kept (site admins); null keeps them for ever', tags, response: Retention, errors: [404] },
            async handler(ctx) {
              const { id, retention_days: days } = ctx.params as { id: string; retention_days: number | null };
              const site = await host.site(id);
              if (!site) throw notFound('Site not found');
              const { rows } = await host.metadata.query<{ previous: number | null }>(
                `WITH previous AS (SELECT retention_days FROM site_retention WHERE site_id = $1)
                 INSERT INTO site_retention (site_id, retention_days) VALUES ($1, $2)
                 ON CONFLICT (site_id) DO UPDATE SET retention_days = EXCLUDED.retention_days, updated_at = now()
                 RETURNING (SELECT retention_days FROM previous) AS previous`,
                [id, days],
              );
              if ((rows[0]?.previous ?? null) !== days) {
                const meta = ctx.meta as { user?: { id: string; email: string } };
                const what = days === null ? 'keep its analytics for ever' : `keep its analytics for ${days} days, archiving older rows`;
                await host.audit({ teamId: site.team_id, action: 'retention_changed', actor: meta.user ?? null, site: { id: site.id, domain: site.domain }, details: `set ${site.domain} to ${what}` });
              }
              return retentionOf(id);
            },
          }),
        },
      },
    ];

    async function retentionOf(siteId: string) {
      const { rows } = await host.metadata.query<{ retention_days: number | null; archived_rows: number; last_archived_at: string | null }>(
        `SELECT (SELECT retention_days FROM site_retention WHERE site_id = $1) AS retention_days,
                COALESCE(sum(rows), 0)::float8 AS archived_rows, ${iso('max(created_at)')} AS last_archived_at
           FROM retention_archives WHERE site_id = $1`,
        [siteId],
      );
      return rows[0];
    }
  },
});

