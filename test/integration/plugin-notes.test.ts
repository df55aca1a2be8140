// The example plugin, loaded by path as a third party's would be, through a real node: its routes
// go through the same gateway, access rules, validation and OpenAPI document as Plumb's own; its
// table lives in a schema of its own; administrators see it running; and disabled, its data stays
// for when it is enabled again.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../lib/config.ts';
import { startNode } from '../../lib/node.ts';
import { action, definePlugin, object, PLUGIN_API_VERSION, Type } from '../../lib/plugins/api.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { runPlumb, tempDataDir } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type Receiver, startReceiver, verifySignature } from '../support/webhook-receiver.ts';

const PLUGIN = './plugins/examples/notes';
/** A plugin whose one route fails as a bug would. */
const crashy = definePlugin({
  name: 'crashy',
  version: '0.1.0',
  apiVersion: PLUGIN_API_VERSION,
  description: 'Fails',
  services: () => [
    {
      name: 'plugins.crashy',
      settings: { rest: '/' },
      actions: {
        boom: action({
          rest: 'GET /api/plugins/crashy/boom',
          auth: 'user',
          openapi: { summary: 'Fails', response: object({ ok: Type.Boolean() }) },
          handler(): { ok: boolean } {
            throw new TypeError("Cannot read properties of undefined (reading 'rows')");
          },
        }),
      },
    },
  ],
});
let t: TestNode;
let admin: Person;
let editor: Person;
let viewer: Person;
let receiver: Receiver;
const notes = (siteId = t.site.id) => `/api/sites/${siteId}/plugins/notes/notes`;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestNode(
    { PLUMB_PLUGINS: `${PLUGIN},crashy`, PLUMB_NOTES_MAX_LENGTH: '40', PLUMB_NOTES_PRUNE_EVERY_SECONDS: '1', PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: 'true', PLUMB_WEBHOOK_SWEEP_SECONDS: '1' },
    { firstPartyPlugins: { crashy: async () => ({ default: crashy }) } },
  );
  admin = await person(t, 'admin');
  [editor, viewer] = await Promise.all([person(t), person(t)]);
  const grant = (who: Person, role: string) => t.node.runtime.metadata().query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [t.site.id, who.id, role]);
  await grant(editor, 'editor');
  await grant(viewer, 'viewer');
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

describe('a plugin’s webhook events', () => {
  it('are in the catalog, may be subscribed to, and arrive signed like Plumb’s own', async () => {
    const owner = await person(t, 'owner');
    const catalog = await as(t, owner, 'GET', `/api/sites/${t.site.id}/webhooks/events`);
    expect(catalog.body.events).toContainEqual({ type: 'notes.created', scope: 'site', description: 'a note is written on a site', fields: ['site_id', 'note_id', 'text', 'author_email'] });
    const hook = await as(t, owner, 'POST', `/api/sites/${t.site.id}/webhooks`, { name: 'notes', url: `${receiver.url}/notes`, events: ['notes.created'] });
    expect(hook.status).toBe(201);
    const written = await as(t, owner, 'POST', notes(), { text: 'Webhook me' });
    const [delivery] = await receiver.waitFor('/notes', 1, 15_000);
    expect(verifySignature(hook.body.secret as string, delivery)).toBe(true);
    const envelope = JSON.parse(delivery.raw.toString()) as { type: string; data: unknown };
    expect(envelope.type).toBe('notes.created');
    expect(envelope.data).toEqual({ site_id: t.site.id, note_id: (written.body.note as { id: string }).id, text: 'Webhook me', author_email: owner.email });
    await as(t, owner, 'DELETE', `/api/sites/${t.site.id}/webhooks/${(hook.body.webhook as { id: string }).id}`);
    await as(t, owner, 'DELETE', `${notes()}/${(written.body.note as { id: string }).id}`);
  });

  it('refuse a subscription to a type no enabled plugin declares', async () => {
    const owner = await person(t, 'owner');
    const res = await as(t, owner, 'POST', `/api/sites/${t.site.id}/webhooks`, { name: 'x', url: `${receiver.url}/x`, events: ['notes.deleted'] });
    expect(res).toMatchObject({ status: 400, body: { fields: [expect.objectContaining({ field: 'events' })] } });
  });
});

describe('a plugin’s routes', () => {
  it('lets a site editor write a note, answered 201 with its Location and audited in the team’s log', async () => {
    const audited = () => t.node.runtime.metadata().query("SELECT action, details FROM audit_log WHERE action = 'notes.created' ORDER BY created_at");
    const before = (await audited()).rows.length;
    const res = await as(t, editor, 'POST', notes(), { text: 'Launched the spring campaign' });
    expect(res.status).toBe(201);
    const note = (res.body.note as { id: string; text: string; author_email: string });
    expect(note).toMatchObject({ text: 'Launched the spring campaign', author_email: editor.email, site_id: t.site.id });
    expect(res.headers.get('location')).toBe(`${notes()}/${note.id}`);
    expect((await audited()).rows.slice(before)).toEqual([{ action: 'notes.created', details: 'wrote a note on example.com' }]);
  });

  it('lets a viewer and a stats:read token read, and refuses what their roles do not allow', async () => {
    expect((await as(t, viewer, 'GET', notes())).body.notes).toEqual([expect.objectContaining({ text: 'Launched the spring campaign' })]);
    expect(await as(t, viewer, 'POST', notes(), { text: 'not mine to write' })).toMatchObject({ status: 403, body: { message: 'This needs the editor role on the site' } });
    const token = await t.token(['stats:read'], [{ siteId: t.site.id, role: 'viewer' }]);
    const read = await fetch(`${t.url}${notes()}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(read.status).toBe(200);
    expect((await as(t, editor, 'GET', notes(t.otherSite.id))).status).toBe(404);
    expect((await as(t, undefined, 'GET', notes())).status).toBe(401);
  });

  it('adds its scope to the ones a token may hold, and a token writes only with it', async () => {
    const offered = await as(t, viewer, 'GET', '/api/user/api-clients/scopes');
    expect((offered.body.scopes as { name: string }[]).map((s) => s.name)).toEqual(['stats:read', 'ingest:write', 'ai-fetch:write', 'mcp', 'notes:write']);
    const issued = await as(t, editor, 'POST', '/api/user/api-clients', { name: 'deploy bot', scopes: ['notes:write'], sites: [{ site_id: t.site.id, role: 'editor' }] });
    expect(issued.status).toBe(201);
    const post = (token: string) =>
      fetch(`${t.url}${notes()}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ text: 'Deployed v2' }) });
    expect((await post(issued.body.token as string)).status).toBe(201);
    const audit = await t.node.runtime.metadata().query("SELECT details FROM audit_log WHERE action = 'notes.created' AND details LIKE '%token%'");
    expect(audit.rows).toEqual([{ details: 'wrote a note on example.com with the API token "deploy bot"' }]);
    const reader = await t.token(['stats:read'], [{ siteId: t.site.id, role: 'editor' }]);
    expect(await (await post(reader)).json()).toEqual({ message: 'This token lacks the notes:write scope', code: 'forbidden' });
    expect(await as(t, editor, 'POST', '/api/user/api-clients', { name: 'x', scopes: ['notes:read'], sites: [] })).toMatchObject({
      status: 400,
      body: { fields: [expect.objectContaining({ field: 'scopes[0]', message: expect.stringContaining('notes:write') })] },
    });
  });

  it('validates with the plugin’s setting and Plumb’s validator alike', async () => {
    expect(await as(t, editor, 'POST', notes(), { text: 'x'.repeat(41) })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed', fields: [{ field: 'text', message: 'text must be at most 40 characters', type: 'stringMax' }] },
    });
    expect(await as(t, editor, 'POST', notes(), {})).toMatchObject({ status: 400, body: { fields: [expect.objectContaining({ field: 'text' })] } });
    expect((await as(t, editor, 'DELETE', `${notes()}/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });

  it('appears in the OpenAPI document with its security and responses', async () => {
    const doc = (await (await fetch(`${t.url}/api/docs/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown> }>> };
    const create = doc.paths['/api/sites/{id}/plugins/notes/notes'].post;
    expect(create.security).toEqual([{ session: [] }, { bearer: [] }, { apiKey: [] }]);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '403', '404']));
    expect(doc.paths['/api/plugins/notes/summary'].get).toBeDefined();
  });

  it('answers a JSON 500 when a plugin’s action throws, and the node goes on serving', async () => {
    const res = await as(t, editor, 'GET', '/api/plugins/crashy/boom');
    expect([res.status, res.body.code]).toEqual([500, 'internal_error']);
    expect(JSON.stringify(res.body)).not.toContain('rows');
    expect((await as(t, viewer, 'GET', notes())).status).toBe(200);
  });

  it('reads the notes of a range of days, in the site’s time zone', async () => {
    const today = new Date().toISOString().slice(0, 10);
    expect(((await as(t, viewer, 'GET', `${notes()}?from=2000-01-01&to=2000-01-31`)).body.notes as unknown[]).length).toBe(0);
    expect(((await as(t, viewer, 'GET', `${notes()}?from=2000-01-01&to=${today}`)).body.notes as unknown[]).length).toBeGreaterThan(0);
    expect(await as(t, viewer, 'GET', `/api/sites/${t.site.id}/plugins/notes/count?from=2000-01-01&to=2000-01-31`)).toMatchObject({ status: 200, body: { notes: 0, authors: 0, pageviews: 0 } });
    expect((await as(t, viewer, 'GET', `${notes()}?from=yesterday`)).status).toBe(400);
  });

  it('describes its dashboard panels, each reading one of its routes, and its table’s Delete button on every row, each with the least site role its route allows', async () => {
    const res = await as(t, viewer, 'GET', '/api/dashboard/plugins');
    type Described = { plugin: string; id: string; kind: string; route: string; role?: string; row_actions?: unknown };
    expect((res.body.site_panels as Described[]).map(({ plugin, id, kind, route, role, row_actions }) => ({ plugin, id, kind, route, role, row_actions }))).toEqual([
      { plugin: 'notes', id: 'count', kind: 'kpis', route: '/api/sites/{site}/plugins/notes/count', role: 'viewer', row_actions: undefined },
      {
        plugin: 'notes',
        id: 'list',
        kind: 'table',
        route: '/api/sites/{site}/plugins/notes/notes',
        role: 'viewer',
        row_actions: [{ id: 'delete', label: 'Delete', method: 'DELETE', route: '/api/sites/{site}/plugins/notes/notes/{id}', confirm: 'Delete this note?', danger: true, role: 'editor' }],
      },
    ]);
  });

  it('describes its site-settings section, whose routes read and save the values', async () => {
    const owner = await person(t, 'owner');
    const described = await as(t, owner, 'GET', '/api/dashboard/plugins');
    expect(described.body.site_settings).toEqual([
      expect.objectContaining({
        plugin: 'notes',
        id: 'settings',
        route: '/api/sites/{site}/plugins/notes/settings',
        actions: [{ id: 'clear', label: 'Delete all notes', route: '/api/sites/{site}/plugins/notes/clear', confirm: 'Delete every note of this site?' }],
      }),
    ]);
    const settings = `/api/sites/${t.site.id}/plugins/notes/settings`;
    expect((await as(t, owner, 'GET', settings)).body).toEqual({ retention_days: null });
    expect((await as(t, owner, 'PUT', settings, { retention_days: 0 })).body).toMatchObject({ code: 'validation_failed', fields: [expect.objectContaining({ field: 'retention_days' })] });
    expect((await as(t, owner, 'PUT', settings, { retention_days: 30 })).body).toEqual({ retention_days: 30 });
    expect((await as(t, owner, 'GET', settings)).body).toEqual({ retention_days: 30 });
    expect((await as(t, editor, 'PUT', settings, { retention_days: null })).status).toBe(403);
    await as(t, owner, 'PUT', settings, { retention_days: null });
  });

  it('deletes, on the leader, the notes past their site’s retention, and no others', async () => {
    const owner = await person(t, 'owner');
    const db = t.node.runtime.metadata();
    const old = crypto.randomUUID();
    const recent = crypto.randomUUID();
    await db.query("INSERT INTO plugin_notes.notes (id, site_id, text, created_at) VALUES ($1, $2, 'old', now() - interval '3 days')", [old, t.otherSite.id]);
    await db.query("INSERT INTO plugin_notes.notes (id, site_id, text) VALUES ($1, $2, 'recent')", [recent, t.otherSite.id]);
    expect((await as(t, owner, 'PUT', `/api/sites/${t.otherSite.id}/plugins/notes/settings`, { retention_days: 1 })).status).toBe(200);
    const left = async () => (await db.query<{ text: string }>('SELECT text FROM plugin_notes.notes WHERE site_id = $1 ORDER BY text', [t.otherSite.id])).rows.map((r) => r.text);
    for (let i = 0; i < 50 && (await left()).includes('old'); i++) await new Promise((r) => setTimeout(r, 200));
    expect(await left()).toEqual(['recent']);
    const cleared = await as(t, owner, 'POST', `/api/sites/${t.otherSite.id}/plugins/notes/clear`, {});
    expect(cleared.body).toEqual({ message: 'Deleted 1 note.', deleted: 1 });
    expect(await left()).toEqual([]);
  });

  it('describes a page for instance administrators, whose panels read its routes', async () => {
    const described = await as(t, admin, 'GET', '/api/dashboard/plugins');
    expect(described.body.admin_pages).toEqual([
      expect.objectContaining({
        plugin: 'notes',
        title: 'Notes on every site',
        nav_label: 'Notes',
        actions: [
          {
            id: 'forget-deleted-sites',
            label: 'Delete notes of deleted sites',
            route: '/api/plugins/notes/deleted-sites/clear',
            confirm: 'Delete the notes of every deleted site? They cannot be restored.',
          },
        ],
        panels: [expect.objectContaining({ id: 'summary', route: '/api/plugins/notes/summary' }), expect.objectContaining({ id: 'sites', route: '/api/plugins/notes/sites' })],
      }),
    ]);
    const sites = await as(t, admin, 'GET', '/api/plugins/notes/sites');
    expect(sites.body.sites).toContainEqual(expect.objectContaining({ site_id: t.site.id, domain: 'example.com' }));
    expect((await as(t, editor, 'GET', '/api/plugins/notes/sites')).status).toBe(403);
  });

  it('deletes, for instance administrators, the notes and settings of deleted sites, and no others', async () => {
    const owner = await person(t, 'owner');
    const db = t.node.runtime.metadata();
    const created = await as(t, owner, 'POST', '/api/sites', { domain: 'gone.example', team_id: t.team.id, timezone: 'UTC' });
    const goneId = (created.body.site as { id: string }).id;
    expect((await as(t, owner, 'POST', notes(goneId), { text: 'Before the site went' })).status).toBe(201);
    expect((await as(t, owner, 'PUT', `/api/sites/${goneId}/plugins/notes/settings`, { retention_days: 30 })).status).toBe(200);
    expect((await as(t, owner, 'DELETE', `/api/sites/${goneId}`)).status).toBe(204);
    const kept = async () => (await db.query<{ site_id: string; n: number }>('SELECT site_id, count(*)::int AS n FROM plugin_notes.notes GROUP BY site_id ORDER BY site_id')).rows;
    const before = await kept();
    expect(before).toContainEqual({ site_id: goneId, n: 1 });

    expect((await as(t, editor, 'POST', '/api/plugins/notes/deleted-sites/clear', {})).status).toBe(403);
    expect((await as(t, admin, 'POST', '/api/plugins/notes/deleted-sites/clear', {})).body).toEqual({ message: 'Deleted 1 note.', deleted: 1 });
    expect(await kept()).toEqual(before.filter((row) => row.site_id !== goneId));
    expect((await db.query('SELECT 1 FROM plugin_notes.site_settings WHERE site_id = $1', [goneId])).rows).toEqual([]);
    expect((await as(t, admin, 'POST', '/api/plugins/notes/deleted-sites/clear', {})).body).toEqual({ message: 'Deleted 0 notes.', deleted: 0 });
  });

  it('reads Plumb’s analytics of the site, and keeps rows of its own in the site’s analytics database', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const hit = await fetch(`${t.url}/api/ingest/server/pageview`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await t.token(['ingest:write'])}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/launch', timestamp: new Date().toISOString(), visitor_ip: '192.0.2.7', user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' }),
    });
    expect(hit.status).toBe(202);
    await t.rows('hits', 1);
    const count = await as(t, viewer, 'GET', `/api/sites/${t.site.id}/plugins/notes/count?from=${today}&to=${today}`);
    expect(count.body.pageviews).toBe(1);
    const marks = await t.node.runtime.analytics().query<{ n: string }>('SELECT count() AS n FROM {db:Identifier}.plugin_notes_marks WHERE site_id = {site:UUID}', {
      db: t.node.runtime.analytics().tenantDatabase(t.team.id),
      site: t.site.id,
    });
    expect(Number(marks[0].n)).toBeGreaterThan(0);
    const ledger = await t.node.runtime.analytics().query<{ version: number }>('SELECT version FROM {db:Identifier}.plugin_notes_schema_migrations', {
      db: t.node.runtime.analytics().tenantDatabase(t.team.id),
    });
    expect(ledger.map((row) => Number(row.version))).toEqual([1]);
  });

  it('keeps its table in a schema of its own', async () => {
    const { rows } = await t.node.runtime.metadata().query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'notes'");
    expect(rows).toEqual([{ table_schema: 'plugin_notes' }]);
  });
});

describe('plumb serve with plugins', () => {
  it('exits 2 naming a bad plugin setting, an unclaimed flag, a plugin for another API version or a missing one', async () => {
    const dataDir = tempDataDir('plumb-plugin-cli-');
    try {
      const run = (args: string[], env: Record<string, string>) => runPlumb(['serve', '-port', '0', ...args], { PLUMB_DATA_DIR: dataDir, ...env });
      const bad = await run([], { PLUMB_PLUGINS: PLUGIN, PLUMB_NOTES_MAX_LENGTH: 'lots' });
      expect([bad.code, bad.stderr.trim()]).toEqual([2, 'plumb: invalid setting PLUMB_NOTES_MAX_LENGTH: must be an integer (got "lots")']);
      const stray = await run(['-notes-colour', 'red'], { PLUMB_PLUGINS: PLUGIN });
      expect([stray.code, stray.stderr.trim()]).toEqual([2, 'plumb: invalid setting -notes-colour: the notes plugin has no such setting (see plumb --help)']);
      const future = join(dataDir, 'future-plugin.ts');
      writeFileSync(future, "export default { name: 'future', version: '9.0.0', apiVersion: 99, description: 'From a later Plumb' };\n");
      const newer = await run([], { PLUMB_PLUGINS: future });
      expect([newer.code, newer.stderr.trim()]).toEqual([2, `plumb: invalid setting PLUMB_PLUGINS: plugin "${future}" cannot be used: it targets plugin API version 99, and this Plumb supports 1`]);
      const missing = await run([], { PLUMB_PLUGINS: './plugins/examples/nothing-here' });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/^plumb: invalid setting PLUMB_PLUGINS: plugin "\.\/plugins\/examples\/nothing-here" not found/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('GET /api/admin/plugins', () => {
  it('shows instance administrators the plugin running, with its routes; nobody else', async () => {
    const res = await as(t, admin, 'GET', '/api/admin/plugins');
    expect(res.body).toEqual({
      plugins: [
        {
          name: 'notes',
          status: 'running',
          version: '1.0.0',
          api_version: 1,
          capabilities: [],
          description: 'Notes on a site’s timeline, written by its editors',
          source: PLUGIN,
          routes: [
            'GET /api/sites/:id/plugins/notes/notes',
            'GET /api/sites/:id/plugins/notes/count',
            'POST /api/sites/:id/plugins/notes/notes',
            'DELETE /api/sites/:id/plugins/notes/notes/:noteId',
            'GET /api/sites/:id/plugins/notes/settings',
            'PUT /api/sites/:id/plugins/notes/settings',
            'POST /api/sites/:id/plugins/notes/clear',
            'GET /api/plugins/notes/sites',
            'POST /api/plugins/notes/deleted-sites/clear',
            'GET /api/plugins/notes/summary',
          ],
        },
        { name: 'crashy', status: 'running', version: '0.1.0', api_version: 1, capabilities: [], description: 'Fails', source: 'crashy', routes: ['GET /api/plugins/crashy/boom'] },
      ],
    });
    expect((await as(t, editor, 'GET', '/api/admin/plugins')).status).toBe(403);
  });

  it('shows a disabled plugin as such, and enabling it again finds its data', async () => {
    const { dataDir } = t;
    const envOf = (plugins: string) => ({ PLUMB_DATA_DIR: dataDir, PLUMB_PORT: '0', PLUMB_HOST: '127.0.0.1', PLUMB_LOG_LEVEL: 'silent', PLUMB_PLUGINS: plugins });
    await t.node.stop();
    const without = await startNode(loadConfig({ env: envOf('') }), { env: {} });
    try {
      const signedIn = await without.runtime.sessions.start(admin.id, { remember: false });
      const cookie = signedIn.setCookies[0].split(';')[0];
      const listed = await (await fetch(`${without.url}/api/admin/plugins`, { headers: { Cookie: cookie } })).json();
      expect(listed).toEqual({ plugins: [{ name: 'notes', status: 'disabled', version: null, api_version: null, description: null, source: null, routes: [], capabilities: [] }] });
      expect((await fetch(`${without.url}${notes()}`, { headers: { Cookie: cookie } })).status).toBe(404);
    } finally {
      await without.stop();
    }
    const again = await startNode(loadConfig({ env: envOf(PLUGIN) }), { env: {} });
    try {
      const cookie = (await again.runtime.sessions.start(viewer.id, { remember: false })).setCookies[0].split(';')[0];
      const read = (await (await fetch(`${again.url}${notes()}`, { headers: { Cookie: cookie } })).json()) as { notes: { text: string }[] };
      expect(read.notes.map((n) => n.text).sort()).toEqual(['Deployed v2', 'Launched the spring campaign']);
    } finally {
      await again.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
