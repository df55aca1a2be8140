// Registering a plugin's contributions on a node: its services must carry its name and its routes
// must live in its namespace (/api/plugins/<name>/… or /api/sites/:id/plugins/<name>/…), or start-up
// stops naming the plugin and the route; its leader jobs are registered under its name; and its
// dashboard descriptors (panels, their actions and row actions, page actions, settings sections)
// must name routes it serves with the right methods (a site panel's action, one that says which
// site roles it allows), refresh within bounds and use formats the dashboard
// knows, or start-up stops naming the descriptor; and how the dashboard writes formatted values.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import type { ServiceBroker, ServiceSchema } from 'moleculer';
import type { LeaderJobs } from '../../cluster/leader-jobs.ts';
import { silentLog } from '../../lib/log.ts';
import { definePlugin, PLUGIN_API_VERSION } from '../../lib/plugins/api.ts';
import { createPluginHost } from '../../lib/plugins/host.ts';
import { dashboardOf, registerPlugins } from '../../lib/plugins/register.ts';
import type { Runtime } from '../../lib/runtime.ts';
import { shownValue } from '../../web/src/dashboard/plugin-values.ts';

/** Intl separates some parts with thin or no-break spaces; the words are what matter here. */
const plain = (text: string) => text.replace(/\s/g, ' ');

function register(services: ServiceSchema[] | (() => ServiceSchema[]), jobs: string[] = []) {
  const created: string[] = [];
  const registered: string[] = [];
  const broker = { createService: (schema: ServiceSchema) => void created.push(schema.name) } as unknown as ServiceBroker;
  const leaderJobs = {
    register(name: string) {
      registered.push(name);
      return async () => undefined;
    },
  } as unknown as LeaderJobs;
  const runtime = { log: silentLog, metadata: () => ({}), sites: {}, whenStoresReady: async () => undefined } as unknown as Runtime;
  const plugin = definePlugin({
    name: 'probe',
    version: '1.0.0',
    apiVersion: PLUGIN_API_VERSION,
    description: 'A probe',
    services: typeof services === 'function' ? services : () => services,
    leaderJobs: () => jobs.map((name) => ({ name, job: { start() {}, stop() {} } })),
  });
  const running = registerPlugins(broker, runtime, leaderJobs, [{ definition: plugin, specifier: './probe' }], new Map());
  return { created, registered, running };
}

const route = (rest: unknown) => ({ name: 'plugins.probe', actions: { act: { rest, auth: 'user', handler: () => null } } }) as unknown as ServiceSchema;

describe('the host API', () => {
  it('lets a plugin insert analytics rows only into its own tables', async () => {
    const runtime = { log: silentLog, metadata: () => ({}), sites: { byId: async () => null }, analytics: () => ({}), whenStoresReady: async () => undefined } as unknown as Runtime;
    const host = createPluginHost(runtime, 'probe', {}, { events: [], notifyWebhooks: () => undefined });
    await expect(host.analytics.insert('00000000-0000-4000-8000-000000000001', 'hits', [{}])).rejects.toThrow('plugin probe may insert only into its own tables (plugin_probe_…), not hits');
    await expect(host.analytics.query('00000000-0000-4000-8000-000000000001', 'SELECT 1')).rejects.toThrow('Site not found');
  });

  it('sends outbound requests only through the guarded client: no loopback or private address, no bad URL', async () => {
    const runtime = { log: silentLog, metadata: () => ({}), sites: {}, whenStoresReady: async () => undefined } as unknown as Runtime;
    const host = createPluginHost(runtime, 'probe', {}, { events: [], notifyWebhooks: () => undefined });
    await expect(host.fetch('http://127.0.0.1:9/admin')).rejects.toMatchObject({ kind: 'blocked_address' });
    await expect(host.fetch('http://10.0.0.1/')).rejects.toMatchObject({ kind: 'blocked_address' });
    await expect(host.fetch('not a url')).rejects.toMatchObject({ kind: 'invalid_url' });
  });

  it('reaches a loopback address only for a request that allows private destinations', async () => {
    const runtime = { log: silentLog, metadata: () => ({}), sites: {}, whenStoresReady: async () => undefined } as unknown as Runtime;
    const host = createPluginHost(runtime, 'probe', {}, { events: [], notifyWebhooks: () => undefined });
    const server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('local'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      await expect(host.fetch(url)).rejects.toMatchObject({ kind: 'blocked_address' });
      const answer = await host.fetch(url, { allowPrivate: true });
      expect({ status: answer.status, body: answer.body.toString() }).toEqual({ status: 200, body: 'local' });
    } finally {
      server.close();
    }
  });

  it('seals secrets with a key of the plugin’s own, bound to what the plugin names', () => {
    const jwtSecret = new TextEncoder().encode('an instance secret of enough length for the test');
    const runtime = { log: silentLog, metadata: () => ({}), sites: {}, whenStoresReady: async () => undefined, jwtSecret, config: { publicUrl: 'https://plumb.example' } } as unknown as Runtime;
    const host = createPluginHost(runtime, 'probe', {}, { events: [], notifyWebhooks: () => undefined });
    const other = createPluginHost(runtime, 'other', {}, { events: [], notifyWebhooks: () => undefined });
    const sealed = host.secrets.seal('a refresh token', 'site-1');
    expect(sealed).not.toContain('refresh');
    expect(host.secrets.open(sealed, 'site-1')).toBe('a refresh token');
    expect(host.secrets.open(sealed, 'site-2')).toBeNull();
    expect(other.secrets.open(sealed, 'site-1')).toBeNull();
    expect(host.secrets.open(`${sealed.slice(0, -2)}AA`, 'site-1')).toBeNull();
    expect(host.publicUrl).toBe('https://plumb.example');
  });

  it('refuses to emit a webhook event the plugin does not declare', async () => {
    const runtime = { log: silentLog, metadata: () => ({}), sites: {}, whenStoresReady: async () => undefined } as unknown as Runtime;
    const host = createPluginHost(runtime, 'probe', {}, { events: [], notifyWebhooks: () => undefined });
    await expect(host.emit('probe.done', {})).rejects.toThrow('plugin probe emits "probe.done", which its webhookEvents do not declare');
  });
});

describe('registering a plugin', () => {
  it('registers its services and leader jobs under its name, and reports its routes', () => {
    const { created, registered, running } = register([route('GET /api/plugins/probe/things'), route({ method: 'POST', path: '/api/sites/:id/plugins/probe/things' })], ['sweep']);
    expect(created).toEqual(['plugins.probe', 'plugins.probe']);
    expect(registered).toEqual(['plugins.probe.sweep']);
    expect(running[0].routes).toEqual(['GET /api/plugins/probe/things', 'POST /api/sites/:id/plugins/probe/things']);
  });

  it('stops start-up for a route outside the plugin’s namespace, in any form, naming plugin, action and route', () => {
    expect(() => register([route('GET /api/users')])).toThrow('plugin probe: action act\'s route "GET /api/users" is outside /api/plugins/probe/… and /api/sites/:id/plugins/probe/…');
    expect(() => register([route({ method: 'GET', path: '/api/plugins/other/x' })])).toThrow(/route "GET \/api\/plugins\/other\/x" is outside/);
    expect(() => register([route('GET /api/sites/:id/plugins/probe-two/x')])).toThrow(/is outside/);
  });

  it('stops start-up naming the plugin when building its services throws', () => {
    expect(() =>
      register(() => {
        throw new Error('no bucket configured');
      }),
    ).toThrow('plugin probe failed to start: its services() threw: no bucket configured');
  });

  it('refuses a dashboard panel or settings section whose routes the plugin does not serve with the right methods', () => {
    const plugin = definePlugin({
      name: 'probe',
      version: '1',
      apiVersion: PLUGIN_API_VERSION,
      description: 'd',
      dashboard: { sitePanels: [{ id: 'x', title: 'X', kind: 'kpis', path: '/missing', kpis: [] }] },
    });
    const running = [{ name: 'probe', version: '1', api_version: 1, description: 'd', source: 'p', routes: ['GET /api/sites/:id/plugins/probe/present'], capabilities: [] }];
    expect(() => dashboardOf([{ definition: plugin, specifier: 'p' }], running)).toThrow('plugin probe: dashboard panel "x" uses GET /api/sites/:id/plugins/probe/missing, a route the plugin does not serve');
    const served = definePlugin({ ...plugin, dashboard: { sitePanels: [{ id: 'x', title: 'X', kind: 'kpis', path: '/present', kpis: [] }] } });
    expect(dashboardOf([{ definition: served, specifier: 'p' }], running).site_panels[0].route).toBe('/api/sites/{site}/plugins/probe/present');
    const form = definePlugin({
      ...plugin,
      dashboard: { siteSettings: [{ id: 's', title: 'S', path: '/present', schema: { type: 'object', properties: {} }, actions: [{ id: 'go', label: 'Go', path: '/go' }] }] },
    });
    expect(() => dashboardOf([{ definition: form, specifier: 'p' }], running)).toThrow('plugin probe: settings section "s" uses PUT /api/sites/:id/plugins/probe/present, a route the plugin does not serve');
    const page = definePlugin({ ...plugin, dashboard: { adminPage: { title: 'P', navLabel: 'P', panels: [{ id: 'a', title: 'A', kind: 'kpis', path: '/present', kpis: [] }] } } });
    expect(() => dashboardOf([{ definition: page, specifier: 'p' }], running)).toThrow('plugin probe: admin page panel "a" uses GET /api/plugins/probe/present, a route the plugin does not serve');
  });

  it('resolves an admin page’s actions and its tables’ row actions into full routes, a row’s {field} standing for a :param segment', () => {
    const plugin = definePlugin({
      name: 'probe',
      version: '1',
      apiVersion: PLUGIN_API_VERSION,
      description: 'd',
      dashboard: {
        sitePanels: [
          {
            id: 'items',
            title: 'Items',
            kind: 'table',
            path: '/items',
            items: 'items',
            columns: [{ key: 'name', label: 'Name' }],
            rowActions: [{ id: 'drop', label: 'Drop', method: 'DELETE', path: '/items/{id}', danger: true }],
          },
        ],
        adminPage: {
          title: 'Backups',
          navLabel: 'Backups',
          actions: [{ id: 'now', label: 'Back up now', path: '/backups', confirm: 'Back up every team now?' }],
          panels: [
            {
              id: 'backups',
              title: 'Backups',
              kind: 'table',
              path: '/backups',
              items: 'backups',
              columns: [{ key: 'file', label: 'File' }],
              rowActions: [
                { id: 'restore', label: 'Restore', method: 'POST', path: '/teams/{team_id}/backups/{id}/restore', confirm: 'Restore this backup?' },
                { id: 'delete', label: 'Delete', method: 'DELETE', path: '/backups/{id}', danger: true },
              ],
            },
            { id: 'count', title: 'Count', kind: 'kpis', path: '/backups', kpis: [{ key: 'backups', label: 'Backups' }] },
          ],
        },
      },
    });
    const routes = [
      'GET /api/sites/:id/plugins/probe/items',
      'DELETE /api/sites/:id/plugins/probe/items/:itemId',
      'GET /api/plugins/probe/backups',
      'POST /api/plugins/probe/backups',
      'POST /api/plugins/probe/teams/:teamId/backups/:backupId/restore',
      'DELETE /api/plugins/probe/backups/:id',
    ];
    const { site_panels, admin_pages } = dashboardOf([{ definition: plugin, specifier: 'p' }], [{ name: 'probe', version: '1', api_version: 1, description: 'd', source: 'p', routes, capabilities: [] }]);
    expect(site_panels).toEqual([
      {
        plugin: 'probe',
        id: 'items',
        title: 'Items',
        kind: 'table',
        path: '/items',
        route: '/api/sites/{site}/plugins/probe/items',
        items: 'items',
        columns: [{ key: 'name', label: 'Name' }],
        row_actions: [{ id: 'drop', label: 'Drop', method: 'DELETE', route: '/api/sites/{site}/plugins/probe/items/{id}', confirm: undefined, danger: true }],
      },
    ]);
    expect(admin_pages).toEqual([
      {
        plugin: 'probe',
        title: 'Backups',
        nav_label: 'Backups',
        actions: [{ id: 'now', label: 'Back up now', route: '/api/plugins/probe/backups', confirm: 'Back up every team now?' }],
        panels: [
          {
            plugin: 'probe',
            id: 'backups',
            title: 'Backups',
            kind: 'table',
            path: '/backups',
            route: '/api/plugins/probe/backups',
            items: 'backups',
            columns: [{ key: 'file', label: 'File' }],
            row_actions: [
              { id: 'restore', label: 'Restore', method: 'POST', route: '/api/plugins/probe/teams/{team_id}/backups/{id}/restore', confirm: 'Restore this backup?', danger: undefined },
              { id: 'delete', label: 'Delete', method: 'DELETE', route: '/api/plugins/probe/backups/{id}', confirm: undefined, danger: true },
            ],
          },
          { plugin: 'probe', id: 'count', title: 'Count', kind: 'kpis', path: '/backups', route: '/api/plugins/probe/backups', kpis: [{ key: 'backups', label: 'Backups' }] },
        ],
      },
    ]);
  });

  describe('a row action or page action whose route the plugin does not serve', () => {
    const table = { id: 'backups', title: 'Backups', kind: 'table', path: '/backups', items: 'backups', columns: [] } as const;
    const running = (...routes: string[]) => [{ name: 'probe', version: '1', api_version: 1, description: 'd', source: 'p', routes: ['GET /api/plugins/probe/backups', 'GET /api/sites/:id/plugins/probe/backups', ...routes], capabilities: [] }];
    const onAdminPage = (rowAction: { id: string; label: string; method: 'POST' | 'DELETE'; path: string }) =>
      definePlugin({ name: 'probe', version: '1', apiVersion: PLUGIN_API_VERSION, description: 'd', dashboard: { adminPage: { title: 'P', navLabel: 'P', panels: [{ ...table, rowActions: [rowAction] }] } } });
    const resolve = (plugin: ReturnType<typeof onAdminPage>, ...routes: string[]) => () => dashboardOf([{ definition: plugin, specifier: 'p' }], running(...routes));
    const drop = { id: 'drop', label: 'Delete', method: 'DELETE', path: '/backups/{id}' } as const;

    it('stops start-up naming the plugin, the panel and the action when no route answers it', () => {
      expect(resolve(onAdminPage(drop))).toThrow('plugin probe: row action "drop" of admin page panel "backups" uses DELETE /api/plugins/probe/backups/{id}, a route the plugin does not serve');
      const onSite = definePlugin({ ...onAdminPage(drop), dashboard: { sitePanels: [{ ...table, rowActions: [drop] }] } });
      expect(resolve(onSite, 'DELETE /api/plugins/probe/backups/:id')).toThrow(
        'plugin probe: row action "drop" of dashboard panel "backups" uses DELETE /api/sites/:id/plugins/probe/backups/{id}, a route the plugin does not serve',
      );
      expect(resolve(onSite, 'DELETE /api/sites/:id/plugins/probe/backups/:backupId')).not.toThrow();
    });

    it('stops start-up when the route is served with another method', () => {
      expect(resolve(onAdminPage(drop), 'POST /api/plugins/probe/backups/:id')).toThrow('plugin probe: row action "drop" of admin page panel "backups" uses DELETE /api/plugins/probe/backups/{id}');
      expect(resolve(onAdminPage({ ...drop, method: 'POST' }), 'DELETE /api/plugins/probe/backups/:id')).toThrow(/row action "drop" .* uses POST \/api\/plugins\/probe\/backups\/\{id\}/);
    });

    it('matches segment for segment: a {field} only a :param, any other segment only itself', () => {
      const served = 'DELETE /api/plugins/probe/backups/:id';
      expect(resolve(onAdminPage({ ...drop, path: '/backups/latest' }), served)).toThrow(/uses DELETE \/api\/plugins\/probe\/backups\/latest, a route the plugin does not serve/);
      expect(resolve(onAdminPage({ ...drop, path: '/{kind}/{id}' }), served)).toThrow(/does not serve/);
      expect(resolve(onAdminPage({ ...drop, path: '/backups/{id}/files' }), served)).toThrow(/does not serve/);
      expect(resolve(onAdminPage({ ...drop, path: '/backups' }), served)).toThrow(/does not serve/);
      expect(resolve(onAdminPage({ ...drop, path: '/backups/{id}' }), 'DELETE /api/plugins/probe/archives/:id')).toThrow(/does not serve/);
      expect(resolve(onAdminPage({ ...drop, path: '/backups/latest' }), 'DELETE /api/plugins/probe/backups/latest')).not.toThrow();
    });

    it('stops start-up for a page action the plugin does not serve as POST; its path has no {field} to fill', () => {
      const page = (path: string) =>
        definePlugin({ name: 'probe', version: '1', apiVersion: PLUGIN_API_VERSION, description: 'd', dashboard: { adminPage: { title: 'P', navLabel: 'P', panels: [], actions: [{ id: 'now', label: 'Now', path }] } } });
      expect(resolve(page('/backups'))).toThrow('plugin probe: admin page action "now" uses POST /api/plugins/probe/backups, a route the plugin does not serve');
      expect(resolve(page('/backups/{id}'), 'POST /api/plugins/probe/backups/:id')).toThrow('plugin probe: admin page action "now" uses POST /api/plugins/probe/backups/{id}, a route the plugin does not serve');
      expect(resolve(page('/backups'), 'POST /api/plugins/probe/backups')().admin_pages[0].actions).toEqual([{ id: 'now', label: 'Now', route: '/api/plugins/probe/backups', confirm: undefined }]);
    });
  });

  describe('a panel that reads its route again (refreshSeconds)', () => {
    const running = [{ name: 'probe', version: '1', api_version: 1, description: 'd', source: 'p', routes: ['GET /api/plugins/probe/backups', 'GET /api/sites/:id/plugins/probe/count'], capabilities: [] }];
    const withRefresh = (refreshSeconds: number) =>
      definePlugin({
        name: 'probe',
        version: '1',
        apiVersion: PLUGIN_API_VERSION,
        description: 'd',
        dashboard: {
          sitePanels: [{ id: 'count', title: 'Count', kind: 'kpis', path: '/count', kpis: [{ key: 'n', label: 'N' }], refreshSeconds }],
          adminPage: { title: 'P', navLabel: 'P', panels: [{ id: 'backups', title: 'Backups', kind: 'table', path: '/backups', items: 'backups', columns: [], refreshSeconds }] },
        },
      });
    const resolve = (refreshSeconds: number) => () => dashboardOf([{ definition: withRefresh(refreshSeconds), specifier: 'p' }], running);

    it('is described with its refresh_seconds, from 2 to 3600', () => {
      expect(resolve(2)().site_panels[0]).toEqual({
        plugin: 'probe',
        id: 'count',
        title: 'Count',
        kind: 'kpis',
        path: '/count',
        route: '/api/sites/{site}/plugins/probe/count',
        kpis: [{ key: 'n', label: 'N' }],
        refresh_seconds: 2,
      });
      expect(resolve(3600)().admin_pages[0].panels[0]).toMatchObject({ id: 'backups', refresh_seconds: 3600 });
      expect(resolve(3600)().admin_pages[0].panels[0]).not.toHaveProperty('refreshSeconds');
    });

    it('stops start-up naming the plugin and the panel when it is not a whole number of seconds from 2 to 3600', () => {
      expect(resolve(1)).toThrow('plugin probe: dashboard panel "count" has refreshSeconds 1; it must be a whole number of seconds from 2 to 3600');
      expect(resolve(3601)).toThrow('plugin probe: dashboard panel "count" has refreshSeconds 3601; it must be a whole number of seconds from 2 to 3600');
      expect(resolve(2.5)).toThrow('plugin probe: dashboard panel "count" has refreshSeconds 2.5; it must be a whole number of seconds from 2 to 3600');
      expect(resolve(Number.NaN)).toThrow('plugin probe: dashboard panel "count" has refreshSeconds NaN; it must be a whole number of seconds from 2 to 3600');
      const onAdminPageOnly = definePlugin({ ...withRefresh(5), dashboard: { adminPage: withRefresh(0).dashboard?.adminPage } });
      expect(() => dashboardOf([{ definition: onAdminPageOnly, specifier: 'p' }], running)).toThrow('plugin probe: admin page panel "backups" has refreshSeconds 0; it must be a whole number of seconds');
    });
  });

  describe('formats of KPIs, table columns and read-only settings fields', () => {
    const routes = ['GET /api/sites/:id/plugins/probe/backups', 'GET /api/sites/:id/plugins/probe/retention', 'PUT /api/sites/:id/plugins/probe/retention'];
    const running = [{ name: 'probe', version: '1', api_version: 1, description: 'd', source: 'p', routes, capabilities: [] }];
    const resolve = (dashboard: NonNullable<Parameters<typeof definePlugin>[0]['dashboard']>) => () =>
      dashboardOf([{ definition: definePlugin({ name: 'probe', version: '1', apiVersion: PLUGIN_API_VERSION, description: 'd', dashboard }), specifier: 'p' }], running);
    const table = (format: string) =>
      ({ id: 'backups', title: 'Backups', kind: 'table', path: '/backups', items: 'backups', columns: [{ key: 'bytes', label: 'Size', numeric: true, format }] }) as never;
    const kpis = (format: string) => ({ id: 'last', title: 'Last', kind: 'kpis', path: '/backups', kpis: [{ key: 'last_bytes', label: 'Size', format }] }) as never;
    const section = (properties: Record<string, unknown>, required?: string[]) =>
      ({ id: 'retention', title: 'Retention', path: '/retention', schema: { type: 'object', properties, required } }) as never;

    it('describes number, bytes and datetime as given', () => {
      const described = resolve({
        sitePanels: [
          {
            id: 'backups',
            title: 'Backups',
            kind: 'table',
            path: '/backups',
            items: 'backups',
            columns: [
              { key: 'started_at', label: 'Started', format: 'datetime' },
              { key: 'bytes', label: 'Size', numeric: true, format: 'bytes' },
              { key: 'rows', label: 'Rows', numeric: true, format: 'number' },
              { key: 'status', label: 'Status' },
            ],
          },
          { id: 'last', title: 'Last', kind: 'kpis', path: '/backups', kpis: [{ key: 'last_bytes', label: 'Size of the last', format: 'bytes' }] },
        ],
        siteSettings: [
          {
            id: 'retention',
            title: 'Retention',
            path: '/retention',
            schema: {
              type: 'object',
              properties: {
                days: { type: 'integer', title: 'Days', nullable: true },
                archived_rows: { type: 'integer', title: 'Rows archived', readOnly: true, format: 'number' },
                last_archived_at: { type: 'string', title: 'Last archived', readOnly: true, format: 'datetime' },
              },
            },
          },
        ],
      })();
      expect(described.site_panels.map((panel) => (panel.kind === 'table' ? panel.columns : panel.kpis))).toEqual([
        [
          { key: 'started_at', label: 'Started', format: 'datetime' },
          { key: 'bytes', label: 'Size', numeric: true, format: 'bytes' },
          { key: 'rows', label: 'Rows', numeric: true, format: 'number' },
          { key: 'status', label: 'Status' },
        ],
        [{ key: 'last_bytes', label: 'Size of the last', format: 'bytes' }],
      ]);
      expect(described.site_settings[0].schema.properties).toEqual({
        days: { type: 'integer', title: 'Days', nullable: true },
        archived_rows: { type: 'integer', title: 'Rows archived', readOnly: true, format: 'number' },
        last_archived_at: { type: 'string', title: 'Last archived', readOnly: true, format: 'datetime' },
      });
    });

    it('are written by the dashboard: bytes in 1024-based units with one decimal, datetime on the page’s clock, number in the reader’s locale', () => {
      const utc = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
      const berlin = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Europe/Berlin' });
      expect([0, 1023, 1024, 8300, 1_048_575, 5_400_000, 3 * 1024 ** 3, 2.5 * 1024 ** 4, 2048 * 1024 ** 4].map((bytes) => shownValue(bytes, 'bytes', utc))).toEqual([
        '0 B',
        '1,023 B',
        '1.0 KiB',
        '8.1 KiB',
        '1.0 MiB',
        '5.1 MiB',
        '3.0 GiB',
        '2.5 TiB',
        '2,048.0 TiB',
      ]);
      expect(plain(shownValue('2026-03-05T14:07:00.000Z', 'datetime', utc))).toBe('Mar 5, 2026, 2:07 PM');
      expect(plain(shownValue('2026-03-05T14:07:00.000Z', 'datetime', berlin))).toBe('Mar 5, 2026, 3:07 PM');
      expect(shownValue('2026-03-05T14:07:00.000Z', 'number', utc)).toBe('2026-03-05T14:07:00.000Z');
      expect(shownValue(1234, 'number', utc)).toBe('1,234');
      expect(shownValue('not a time', 'datetime', utc)).toBe('not a time');
      // A read-only list: its values, each written as one value is.
      expect(shownValue(['sc-domain:a.example', 'https://b.example/'], undefined, utc)).toBe('sc-domain:a.example, https://b.example/');
      expect(shownValue([1024, 8300], 'bytes', utc)).toBe('1.0 KiB, 8.1 KiB');
      expect(shownValue([], undefined, utc)).toBe('—');
      // Without a format: numbers in the locale, RFC 3339 times on the clock, as before formats existed.
      expect(shownValue(8300, undefined, utc)).toBe('8,300');
      expect(plain(shownValue('2026-03-05T14:07:00.000Z', undefined, utc))).toBe('Mar 5, 2026, 2:07 PM');
      for (const format of ['number', 'bytes', 'datetime', undefined] as const) {
        expect([null, undefined, ''].map((nothing) => shownValue(nothing, format, utc))).toEqual(['—', '—', '—']);
      }
    });

    it('stops start-up naming the plugin, the panel and the column or KPI for a format the dashboard does not know', () => {
      expect(resolve({ sitePanels: [table('kilobytes')] })).toThrow('plugin probe: column "bytes" of dashboard panel "backups" has format "kilobytes"; a format is one of number, bytes, datetime, country');
      expect(resolve({ sitePanels: [kpis('date-time')] })).toThrow('plugin probe: KPI "last_bytes" of dashboard panel "last" has format "date-time"; a format is one of number, bytes, datetime, country');
    });

    it('stops start-up for a settings field that is read-only and required, formatted but editable, or of an unknown format', () => {
      expect(resolve({ siteSettings: [section({ rows: { type: 'integer', title: 'Rows', readOnly: true } }, ['rows'])] })).toThrow(
        'plugin probe: field "rows" of settings section "retention" is read-only and required; a read-only field is never sent',
      );
      expect(resolve({ siteSettings: [section({ days: { type: 'integer', title: 'Days', format: 'number' } })] })).toThrow(
        'plugin probe: field "days" of settings section "retention" has a format but is not read-only; a format applies to shown values only',
      );
      expect(resolve({ siteSettings: [section({ at: { type: 'string', title: 'At', readOnly: true, format: 'time' } })] })).toThrow(
        'plugin probe: field "at" of settings section "retention" has format "time"; a format is one of number, bytes, datetime, country',
      );
    });
  });

  describe('a site panel’s actions (buttons above it that POST the dashboard’s range)', () => {
    const routes = ['GET /api/sites/:id/plugins/probe/items', 'POST /api/sites/:id/plugins/probe/runs', 'POST /api/sites/:id/plugins/probe/open', 'POST /api/sites/:id/plugins/probe/items/:itemId/drop'];
    const siteRoles = { 'GET /api/sites/:id/plugins/probe/items': 'viewer', 'POST /api/sites/:id/plugins/probe/runs': 'admin', 'POST /api/sites/:id/plugins/probe/items/:itemId/drop': 'editor' } as const;
    const running = [{ name: 'probe', version: '1', api_version: 1, description: 'd', source: 'p', routes, capabilities: [], siteRoles }];
    const table = { id: 'items', title: 'Items', kind: 'table', path: '/items', items: 'items', columns: [] } as const;
    const withActions = (actions: unknown, where: 'site' | 'admin' = 'site') => {
      const panel = { ...table, actions: actions as never, rowActions: [{ id: 'drop', label: 'Drop', method: 'POST', path: '/items/{id}/drop' }] } as const;
      const dashboard = where === 'site' ? { sitePanels: [panel] } : { adminPage: { title: 'P', navLabel: 'P', panels: [panel] } };
      return () => dashboardOf([{ definition: definePlugin({ name: 'probe', version: '1', apiVersion: PLUGIN_API_VERSION, description: 'd', dashboard }), specifier: 'p' }], running);
    };
    const generate = { id: 'generate', label: 'Generate', path: '/runs', confirm: 'Start a run?' };

    it('describes each with its full route and the least site role its route allows, as it does the panel and its row actions', () => {
      const [panel] = withActions([generate])().site_panels;
      expect(panel).toMatchObject({
        route: '/api/sites/{site}/plugins/probe/items',
        role: 'viewer',
        actions: [{ id: 'generate', label: 'Generate', route: '/api/sites/{site}/plugins/probe/runs', confirm: 'Start a run?', role: 'admin' }],
        row_actions: [{ id: 'drop', route: '/api/sites/{site}/plugins/probe/items/{id}/drop', role: 'editor' }],
      });
    });

    it('learns each route’s site role from the access its action declares', () => {
      const { running: registered } = register([
        {
          name: 'plugins.probe',
          actions: {
            runs: { rest: 'POST /api/sites/:id/plugins/probe/runs', auth: 'any', access: { site: { param: 'id', role: 'admin' } }, handler: () => null },
            usage: { rest: 'GET /api/plugins/probe/usage', auth: 'user', access: { instance: 'admin' }, handler: () => null },
          },
        } as unknown as ServiceSchema,
      ]);
      expect(registered[0].siteRoles).toEqual({ 'POST /api/sites/:id/plugins/probe/runs': 'admin' });
    });

    it('stops start-up naming the plugin, the panel and the action when the plugin does not serve its route as POST', () => {
      expect(withActions([{ ...generate, path: '/items' }])).toThrow('plugin probe: action "generate" of dashboard panel "items" uses POST /api/sites/:id/plugins/probe/items, a route the plugin does not serve');
    });

    it('stops start-up when its route declares no site role, so the dashboard could not tell whom to show it to', () => {
      expect(withActions([{ ...generate, path: '/open' }])).toThrow(
        "plugin probe: action \"generate\" of dashboard panel \"items\" uses POST /api/sites/:id/plugins/probe/open, which declares no access.site role; the dashboard draws a panel's button only for the site roles its route allows",
      );
    });

    it('stops start-up for two actions with one id, an action without a label, and actions on an admin page panel', () => {
      expect(withActions([generate, generate])).toThrow('plugin probe: dashboard panel "items" has two actions with the id "generate"');
      expect(withActions([{ ...generate, label: ' ' }])).toThrow('plugin probe: action "generate" of dashboard panel "items" has no label');
      expect(withActions([generate], 'admin')).toThrow('plugin probe: admin page panel "items" has actions; a panel\'s actions are for the site dashboard, the admin page has its own actions');
    });
  });

  describe('a settings section’s conditional actions (shownWhen) and choices from a list (choicesFrom)', () => {
    const routes = ['GET /api/sites/:id/plugins/probe/link', 'PUT /api/sites/:id/plugins/probe/link', 'POST /api/sites/:id/plugins/probe/connect', 'GET /api/sites/:id/plugins/probe/items'];
    const running = [{ name: 'probe', version: '1', api_version: 1, description: 'd', source: 'p', routes, capabilities: [] }];
    const properties = {
      account: { type: 'string', title: 'Account', choicesFrom: 'accounts', nullable: true },
      accounts: { type: 'array', title: 'Accounts', readOnly: true, hidden: true },
      connected: { type: 'boolean', title: 'Connected', readOnly: true, hidden: true },
    };
    const connect = { id: 'connect', label: 'Connect', path: '/connect', shownWhen: { field: 'connected', in: [false] } };
    const resolve = (fields: Record<string, unknown>, actions: unknown[] = [connect]) => () =>
      dashboardOf(
        [
          {
            definition: definePlugin({
              name: 'probe',
              version: '1',
              apiVersion: PLUGIN_API_VERSION,
              description: 'd',
              dashboard: { siteSettings: [{ id: 'link', title: 'Link', path: '/link', schema: { type: 'object', properties: fields as never }, actions: actions as never }] },
            }),
            specifier: 'p',
          },
        ],
        running,
      );

    it('describes the condition with the button and the list with the field', () => {
      const [section] = resolve(properties)().site_settings;
      expect(section.actions).toEqual([{ id: 'connect', label: 'Connect', route: '/api/sites/{site}/plugins/probe/connect', shown_when: { field: 'connected', in: [false] } }]);
      expect(section.schema.properties).toEqual(properties);
    });

    it('stops start-up for a condition on a field the section’s schema lacks, or with no values', () => {
      expect(resolve(properties, [{ ...connect, shownWhen: { field: 'linked', in: [true] } }])).toThrow(
        'plugin probe: action "connect" of settings section "link" is shown by the field "linked", which is not in the section\'s schema',
      );
      expect(resolve(properties, [{ ...connect, shownWhen: { field: 'connected', in: [] } }])).toThrow(
        'plugin probe: action "connect" of settings section "link" has a shownWhen without values in "in"; it would never be shown',
      );
    });

    it('stops start-up for a condition on a panel’s or the admin page’s action, which reads no section', () => {
      const panel = { id: 'items', title: 'Items', kind: 'table', path: '/items', items: 'items', columns: [], actions: [{ ...connect, path: '/connect' }] } as never;
      const load = (dashboard: NonNullable<Parameters<typeof definePlugin>[0]['dashboard']>) => () =>
        dashboardOf([{ definition: definePlugin({ name: 'probe', version: '1', apiVersion: PLUGIN_API_VERSION, description: 'd', dashboard }), specifier: 'p' }], running);
      expect(load({ sitePanels: [panel] })).toThrow('plugin probe: action "connect" of dashboard panel "items" has shownWhen; only a settings section\'s action is drawn by the state its section reads');
    });

    it('stops start-up for choices from a field that is missing, editable or not a list, and for choices on a field that is not an editable string', () => {
      const why = 'which is not a read-only array field of the section';
      expect(resolve({ ...properties, account: { ...properties.account, choicesFrom: 'listed' } })).toThrow(`plugin probe: field "account" of settings section "link" takes its choices from "listed", ${why}`);
      expect(resolve({ ...properties, account: { ...properties.account, choicesFrom: 'connected' } })).toThrow(`takes its choices from "connected", ${why}`);
      expect(resolve({ ...properties, account: { ...properties.account, choicesFrom: 'account' } })).toThrow(`takes its choices from "account", ${why}`);
      expect(resolve({ ...properties, account: { ...properties.account, type: 'integer' } })).toThrow(
        'plugin probe: field "account" of settings section "link" has choicesFrom; only an editable string field without an enum takes its choices from a list',
      );
      expect(resolve({ ...properties, account: { ...properties.account, enum: ['a'] } })).toThrow('has choicesFrom; only an editable string field without an enum');
    });

    it('stops start-up for a hidden or list field a person would have to set', () => {
      expect(resolve({ ...properties, note: { type: 'string', title: 'Note', hidden: true } })).toThrow('plugin probe: field "note" of settings section "link" is hidden but not read-only; a person could not set it');
      expect(resolve({ ...properties, tags: { type: 'array', title: 'Tags' } })).toThrow('plugin probe: field "tags" of settings section "link" is an array but not read-only; a list is only shown or offered as choices');
    });
  });

  it('stops start-up naming the plugin when one of its analytics migrations is misnamed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-plugin-migrations-'));
    writeFileSync(join(dir, 'tables.sql'), 'SELECT 1;\n');
    const plugin = definePlugin({ name: 'probe', version: '1', apiVersion: PLUGIN_API_VERSION, description: 'd', analyticsMigrations: dir });
    const runtime = { log: silentLog, metadata: () => ({}), sites: {}, whenStoresReady: async () => undefined } as unknown as Runtime;
    const broker = { createService: () => undefined, broadcast: () => undefined } as unknown as ServiceBroker;
    expect(() => registerPlugins(broker, runtime, {} as LeaderJobs, [{ definition: plugin, specifier: 'p' }], new Map())).toThrow(
      'plugin probe failed to start: its analytics migrations threw: tenant migration tables.sql: name must look like 0001_snake_case_name.sql',
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops start-up for a service named like Plumb’s own', () => {
    expect(() => register([{ name: 'sites', actions: {} }])).toThrow('plugin probe: service "sites" must be named plugins.probe or plugins.probe.<part>');
  });
});
