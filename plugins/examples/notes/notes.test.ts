// The notes plugin's own tests, written as a plugin author outside Plumb would write them: only
// the plugin test kit (a real node with the plugin enabled by path) and HTTP.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type PluginTestNode, startPluginTestNode } from '../../../lib/plugins/testing.ts';

let plumb: PluginTestNode;
const notes = () => `/api/sites/${plumb.site.id}/plugins/notes/notes`;

beforeAll(async () => {
  plumb = await startPluginTestNode({ plugins: ['./plugins/examples/notes'], env: { PLUMB_NOTES_MAX_LENGTH: '20' } });
}, 60_000);

afterAll(async () => {
  await plumb?.stop();
});

describe('notes on a site', () => {
  it('are written by editors and read by viewers and stats:read tokens', async () => {
    const editor = await plumb.as('editor');
    expect((await editor.request('POST', notes(), { text: 'Spring launch' })).status).toBe(201);
    const viewer = await plumb.as('viewer');
    expect((await viewer.request('GET', notes())).body).toEqual({ notes: [expect.objectContaining({ text: 'Spring launch', author_email: editor.user.email })] });
    const token = await plumb.token(['stats:read']);
    expect((await token.request('GET', notes())).status).toBe(200);
    const writer = await plumb.token(['notes:write'], 'editor');
    expect((await writer.request('POST', notes(), { text: 'From a deploy' })).status).toBe(201);
  });

  it('refuse a viewer’s note, a stranger, and anyone without credentials', async () => {
    expect((await (await plumb.as('viewer')).request('POST', notes(), { text: 'mine' })).status).toBe(403);
    expect((await (await plumb.as('outsider')).request('GET', notes())).status).toBe(404);
    expect((await plumb.anonymous.request('GET', notes())).status).toBe(401);
    expect((await (await plumb.token(['ingest:write'])).request('GET', notes())).status).toBe(403);
  });

  it('are no longer than the max_length setting', async () => {
    const res = await (await plumb.as('editor')).request('POST', notes(), { text: 'a note that is too long' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ fields: [{ field: 'text', message: 'text must be at most 20 characters' }] });
  });

  it('are counted for instance administrators only', async () => {
    expect((await (await plumb.as('instance-admin')).request('GET', '/api/plugins/notes/summary')).body).toEqual({ notes: 2, sites: 1 });
    expect((await (await plumb.as('owner')).request('GET', '/api/plugins/notes/summary')).status).toBe(403);
  });

  it('of deleted sites are deleted when an instance administrator asks, and no others', async () => {
    const admin = await plumb.as('instance-owner');
    const created = await admin.request('POST', '/api/sites', { domain: 'gone.example', team_id: plumb.team.id, timezone: 'UTC' });
    expect(created.status).toBe(201);
    const goneId = (created.body as { site: { id: string } }).site.id;
    expect((await admin.request('POST', `/api/sites/${goneId}/plugins/notes/notes`, { text: 'Soon gone' })).status).toBe(201);
    expect((await admin.request('DELETE', `/api/sites/${goneId}`)).status).toBe(204);
    expect((await admin.request('GET', '/api/plugins/notes/summary')).body).toEqual({ notes: 3, sites: 2 });
    expect((await (await plumb.as('owner')).request('POST', '/api/plugins/notes/deleted-sites/clear', {})).status).toBe(403);
    expect((await admin.request('POST', '/api/plugins/notes/deleted-sites/clear', {})).body).toEqual({ message: 'Deleted 1 note.', deleted: 1 });
    expect((await admin.request('GET', '/api/plugins/notes/summary')).body).toEqual({ notes: 2, sites: 1 });
  });
});
