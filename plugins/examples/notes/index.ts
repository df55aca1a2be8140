// An example plugin, written only against Plumb's plugin API (lib/plugins/api.ts) and loaded by
// path as a third party's would be: `PLUMB_PLUGINS=./plugins/examples/notes`. It keeps short notes
// on a site ("launched the spring campaign") in a table of its own, lets a site's editors (and
// tokens with its notes:write scope) write and delete them and anyone who may read the site's
// statistics read them, writes the team's audit log, sends a notes.created webhook event, and
// gives instance administrators a count and a way to delete the notes of deleted sites.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { action, DateTime, definePlugin, NoContent, notFound, nullable, object, PLUGIN_API_VERSION, Type, Uuid, validationFailed } from '../../../lib/plugins/api.ts';

const Settings = object({ retention_days: nullable(Type.Integer()) });
const Note = object({ id: Uuid, site_id: Uuid, text: Type.String(), author_email: nullable(Type.String()), created_at: DateTime });

interface NoteRow {
  id: string;
  site_id: string;
  text: string;
  author_email: string | null;
  created_at: string;
}
/** Optional days of a range, as the dashboard sends them. */
const range = { from: { type: 'string', pattern: /^\d{4}-\d{2}-\d{2}$/, optional: true }, to: { type: 'string', pattern: /^\d{4}-\d{2}-\d{2}$/, optional: true } };
/** $2: the site's time zone; $3, $4: the first and last day, or null for no bound. */
const IN_RANGE = `($3::date IS NULL OR (created_at AT TIME ZONE $2)::date >= $3::date) AND ($4::date IS NULL OR (created_at AT TIME ZONE $2)::date <= $4::date)`;
/** The answer of an action that deletes notes: `Deleted 2 notes.` */
const deletedNotes = (deleted: number) => ({ message: `Deleted ${deleted} ${deleted === 1 ? 'note' : 'notes'}.`, deleted });
const COLUMNS = `id, site_id, text, author_email, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

export default definePlugin({
  name: 'notes',
  version: '1.0.0',
  apiVersion: PLUGIN_API_VERSION,
  description: 'Notes on a site’s timeline, written by its editors',
  settings: {
    max_length: { type: 'int', default: 500, min: 10, max: 10_000, description: 'Longest note, in characters.' },
    prune_every_seconds: { type: 'int', default: 3600, min: 1, max: 86_400, description: 'How often the leader deletes notes past their site’s retention.' },
  },
  // A token writes notes only with this scope (and the editor role on the site); people need the role alone.
  scopes: [{ name: 'notes:write', description: 'Write and delete notes on the token’s sites' }],
  dashboard: {
    sitePanels: [
      {
        id: 'count',
        title: 'Notes',
        kind: 'kpis',
        path: '/count',
        kpis: [
          { key: 'notes', label: 'Notes' },
          { key: 'authors', label: 'Authors' },
          { key: 'pageviews', label: 'Pageviews meanwhile' },
        ],
      },
      {
        id: 'list',
        title: 'Notes of the range',
        kind: 'table',
        path: '/notes',
        items: 'notes',
        columns: [
          { key: 'created_at', label: 'Written' },
          { key: 'text', label: 'Note' },
          { key: 'author_email', label: 'By' },
        ],
        empty: 'No notes in this range. Editors write them with POST /api/sites/{id}/plugins/notes/notes.',
        rowActions: [{ id: 'delete', label: 'Delete', method: 'DELETE', path: '/notes/{id}', confirm: 'Delete this note?', danger: true }],
      },
    ],
    adminPage: {
      title: 'Notes on every site',
      navLabel: 'Notes',
      actions: [
        { id: 'forget-deleted-sites', label: 'Delete notes of deleted sites', path: '/deleted-sites/clear', confirm: 'Delete the notes of every deleted site? They cannot be restored.' },
      ],
      panels: [
        { id: 'summary', title: 'All notes', kind: 'kpis', path: '/summary', kpis: [{ key: 'notes', label: 'Notes' }, { key: 'sites', label: 'Sites with notes' }] },
        {
          id: 'sites',
          title: 'Sites with the most notes',
          kind: 'table',
          path: '/sites',
          items: 'sites',
          columns: [
            { key: 'domain', label: 'Site' },
            { key: 'notes', label: 'Notes', numeric: true },
            { key: 'last_note_at', label: 'Last note' },
          ],
          empty: 'No site has notes yet.',
        },
      ],
    },
    siteSettings: [
      {
        id: 'settings',
        title: 'Notes',
        description: 'Notes your editors write on this site’s timeline.',
        path: '/settings',
        schema: {
          type: 'object',
          properties: {
            retention_days: { type: 'integer', title: 'Keep notes for (days)', description: 'empty keeps them for ever', minimum: 1, maximum: 3650, nullable: true },
          },
        },
        actions: [{ id: 'clear', label: 'Delete all notes', path: '/clear', confirm: 'Delete every note of this site?' }],
      },
    ],
  },
  webhookEvents: [{ type: 'notes.created', scope: 'site', description: 'a note is written on a site', fields: ['site_id', 'note_id', 'text', 'author_email'] }],
  metadataMigrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  analyticsMigrations: fileURLToPath(new URL('./analytics/', import.meta.url)),

  leaderJobs(host) {
    let timer: NodeJS.Timeout | undefined;
    const prune = async () => {
      const { rowCount } = await host.metadata.query(
        `DELETE FROM notes n USING site_settings s
          WHERE s.site_id = n.site_id AND s.retention_days IS NOT NULL AND n.created_at < now() - make_interval(days => s.retention_days)`,
      );
      if (rowCount) host.log.info({ deleted: rowCount }, 'notes past their retention deleted');
    };
    return [
      {
        name: 'prune',
        job: {
          start() {
            timer = setInterval(() => void prune().catch((err: unknown) => host.log.warn({ err }, 'pruning notes failed')), host.settings.prune_every_seconds * 1000);
            timer.unref();
          },
          stop() {
            clearInterval(timer);
          },
        },
      },
    ];
  },

  services(host) {
    const tags = ['plugin: notes'];
    return [
      {
        name: 'plugins.notes',
        settings: { rest: '/' },
        actions: {
          list: action({
            rest: 'GET /api/sites/:id/plugins/notes/notes',
            auth: 'any',
            access: { site: { param: 'id', role: 'viewer', scope: 'stats:read' } },
            params: { id: 'uuid', ...range },
            openapi: { summary: 'The site’s notes, newest first (at most 100), of the days from–to when given (the site’s time zone)', tags, response: object({ notes: Type.Array(Note) }) },
            async handler(ctx) {
              const { id, from, to } = ctx.params as { id: string; from?: string; to?: string };
              const { rows } = await host.metadata.query<NoteRow>(
                `SELECT ${COLUMNS} FROM notes WHERE site_id = $1 AND ${IN_RANGE} ORDER BY created_at DESC, id LIMIT 100`,
                [id, (await host.site(id))?.timezone ?? 'UTC', from ?? null, to ?? null],
              );
              return { notes: rows };
            },
          }),

          count: action({
            rest: 'GET /api/sites/:id/plugins/notes/count',
            auth: 'any',
            access: { site: { param: 'id', role: 'viewer', scope: 'stats:read' } },
            params: { id: 'uuid', ...range },
            openapi: {
              summary: 'How many notes the site has, by how many authors, and its pageviews, in the days from–to when given',
              tags,
              response: object({ notes: Type.Integer(), authors: Type.Integer(), pageviews: Type.Integer() }),
            },
            async handler(ctx) {
              const { id, from, to } = ctx.params as { id: string; from?: string; to?: string };
              const timezone = (await host.site(id))?.timezone ?? 'UTC';
              const { rows } = await host.metadata.query<{ notes: number; authors: number }>(
                `SELECT count(*)::int AS notes, count(DISTINCT author_email)::int AS authors FROM notes WHERE site_id = $1 AND ${IN_RANGE}`,
                [id, timezone, from ?? null, to ?? null],
              );
              // Plumb's own analytics, read from the site's database.
              const [traffic] = await host.analytics.query<{ pageviews: string }>(
                id,
                'SELECT count() AS pageviews FROM {db:Identifier}.hits WHERE site_id = {site:UUID} AND toDate(ts, {tz:String}) BETWEEN {from:Date} AND {to:Date}',
                { site: id, tz: timezone, from: from ?? '1970-01-01', to: to ?? '2149-06-06' },
              );
              return { ...rows[0], pageviews: Number(traffic.pageviews) };
            },
          }),

          create: action({
            rest: 'POST /api/sites/:id/plugins/notes/notes',
            location: '/api/sites/:id/plugins/notes/notes/{note.id}',
            auth: 'any',
            access: { site: { param: 'id', role: 'editor', scope: 'notes:write' } },
            params: { id: 'uuid', text: 'string|trim|min:1' },
            openapi: { summary: 'Write a note on the site (site editors)', tags, successStatus: 201, response: object({ note: Note }) },
            async handler(ctx) {
              const { id: siteId, text } = ctx.params as { id: string; text: string };
              if (text.length > host.settings.max_length) {
                throw validationFailed([{ field: 'text', message: `text must be at most ${host.settings.max_length} characters`, type: 'stringMax' }]);
              }
              const site = await host.site(siteId);
              if (!site) throw notFound('Site not found');
              // A person, or the token's owner: whoever wrote it is named in the note and the audit log.
              const meta = ctx.meta as { user?: { id: string; email: string }; apiClient?: { name: string } };
              const user = meta.user ?? null;
              const { rows } = await host.metadata.query<NoteRow>(`INSERT INTO notes (id, site_id, text, author_email) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`, [
                randomUUID(),
                siteId,
                text,
                user?.email ?? null,
              ]);
              const by = user ? '' : ` with the API token "${meta.apiClient?.name}"`;
              await host.audit({ teamId: site.team_id, action: 'created', actor: user, site: { id: site.id, domain: site.domain }, details: `wrote a note on ${site.domain}${by}` });
              const note = rows[0];
              await host.analytics.insert(siteId, 'plugin_notes_marks', [{ ts: note.created_at, site_id: siteId, note_id: note.id }]);
              await host.emit('notes.created', { site_id: siteId, note_id: note.id, text: note.text, author_email: note.author_email });
              (ctx.meta as { $statusCode?: number }).$statusCode = 201;
              return { note };
            },
          }),

          remove: action({
            rest: 'DELETE /api/sites/:id/plugins/notes/notes/:noteId',
            auth: 'any',
            access: { site: { param: 'id', role: 'editor', scope: 'notes:write' } },
            params: { id: 'uuid', noteId: 'uuid' },
            openapi: { summary: 'Delete a note (site editors)', tags, successStatus: 204, response: NoContent },
            async handler(ctx) {
              const { id: siteId, noteId } = ctx.params as { id: string; noteId: string };
              const { rowCount } = await host.metadata.query('DELETE FROM notes WHERE id = $1 AND site_id = $2', [noteId, siteId]);
              if (!rowCount) throw notFound('Note not found');
              (ctx.meta as { $statusCode?: number }).$statusCode = 204;
              return null;
            },
          }),

          settings: action({
            rest: 'GET /api/sites/:id/plugins/notes/settings',
            auth: 'user',
            access: { site: { param: 'id', role: 'admin' } },
            params: { id: 'uuid' },
            openapi: { summary: 'The site’s notes settings (site admins)', tags, response: Settings },
            async handler(ctx) {
              const { rows } = await host.metadata.query<{ retention_days: number | null }>('SELECT retention_days FROM site_settings WHERE site_id = $1', [ctx.params.id]);
              return { retention_days: rows[0]?.retention_days ?? null };
            },
          }),

          saveSettings: action({
            rest: 'PUT /api/sites/:id/plugins/notes/settings',
            auth: 'user',
            access: { site: { param: 'id', role: 'admin' } },
            params: { id: 'uuid', retention_days: { type: 'number', integer: true, min: 1, max: 3650, nullable: true } },
            openapi: { summary: 'Change how long the site’s notes are kept (site admins); null keeps them for ever', tags, response: Settings },
            async handler(ctx) {
              const { id, retention_days: days } = ctx.params as { id: string; retention_days: number | null };
              await host.metadata.query(
                `INSERT INTO site_settings (site_id, retention_days) VALUES ($1, $2)
                 ON CONFLICT (site_id) DO UPDATE SET retention_days = EXCLUDED.retention_days, updated_at = now()`,
                [id, days],
              );
              return { retention_days: days };
            },
          }),

          clear: action({
            rest: 'POST /api/sites/:id/plugins/notes/clear',
            auth: 'user',
            access: { site: { param: 'id', role: 'admin' } },
            params: { id: 'uuid' },
            openapi: { summary: 'Delete every note of the site (site admins)', tags, response: object({ message: Type.String(), deleted: Type.Integer() }) },
            async handler(ctx) {
              const { rowCount } = await host.metadata.query('DELETE FROM notes WHERE site_id = $1', [ctx.params.id]);
              return deletedNotes(rowCount ?? 0);
            },
          }),

          sites: action({
            rest: 'GET /api/plugins/notes/sites',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: {
              summary: 'The 20 sites with the most notes (instance administrators)',
              tags,
              response: object({ sites: Type.Array(object({ site_id: Uuid, domain: Type.String(), notes: Type.Integer(), last_note_at: DateTime })) }),
            },
            async handler() {
              const { rows } = await host.metadata.query<{ site_id: string; notes: number; last_note_at: string }>(
                `SELECT site_id, count(*)::int AS notes, to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_note_at
                   FROM notes GROUP BY site_id ORDER BY notes DESC, site_id LIMIT 20`,
              );
              const sites = [];
              for (const row of rows) {
                const site = await host.site(row.site_id);
                // Notes of a deleted site are kept but not listed.
                if (site) sites.push({ ...row, domain: site.domain });
              }
              return { sites };
            },
          }),

          clearDeletedSites: action({
            rest: 'POST /api/plugins/notes/deleted-sites/clear',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: {
              summary: 'Delete the notes and settings of every deleted site, which are otherwise kept (instance administrators)',
              tags,
              response: object({ message: Type.String(), deleted: Type.Integer() }),
            },
            async handler() {
              const { rows } = await host.metadata.query<{ site_id: string }>('SELECT site_id FROM notes UNION SELECT site_id FROM site_settings');
              const gone: string[] = [];
              for (const { site_id } of rows) if (!(await host.site(site_id))) gone.push(site_id);
              const deleted = await host.metadata.transaction(async (tx) => {
                await tx.query('DELETE FROM site_settings WHERE site_id = ANY($1::uuid[])', [gone]);
                return (await tx.query('DELETE FROM notes WHERE site_id = ANY($1::uuid[])', [gone])).rowCount ?? 0;
              });
              return deletedNotes(deleted);
            },
          }),

          summary: action({
            rest: 'GET /api/plugins/notes/summary',
            auth: 'user',
            access: { instance: 'admin' },
            openapi: { summary: 'How many notes there are, on how many sites (instance administrators)', tags, response: object({ notes: Type.Integer(), sites: Type.Integer() }) },
            async handler() {
              const { rows } = await host.metadata.query<{ notes: number; sites: number }>('SELECT count(*)::int AS notes, count(DISTINCT site_id)::int AS sites FROM notes');
              return rows[0];
            },
          }),
        },
      },
    ];
  },
});
