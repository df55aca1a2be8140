// The plugin test kit: a real Plumb node (embedded stores in a temporary data dir, a free port on
// loopback) with the given plugins enabled, a team and a site in it, and clients that call it as
// people with a role on that site, as an instance administrator, as an API token, or as nobody.
// A plugin's tests use it the way the example's do (plugins/examples/notes/notes.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../auth/api-clients.ts';
import type { ApiScope, SiteRole } from '../auth/roles.ts';
import { loadConfig } from '../config.ts';
import { startNode } from '../node.ts';
import { createSite, createTeam } from '../sites/sites.ts';
import { createUser } from '../users/users.ts';

export interface TestResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON answer, or null for an empty or non-JSON one. */
  body: Record<string, unknown> | null;
}

export interface TestClient {
  /** A JSON request to the node; `path` starts with a slash. */
  request(method: string, path: string, body?: unknown): Promise<TestResponse>;
}

/** Someone to call the node as: a role on the test site, or an instance role. */
export type TestCaller = SiteRole | 'instance-owner' | 'instance-admin' | 'outsider';

export interface PluginTestNode {
  url: string;
  team: { id: string };
  site: { id: string; domain: string };
  /** A new person with that role (on the test site, or on the instance) and a signed-in session. */
  as(caller: TestCaller): Promise<TestClient & { user: { id: string; email: string } }>;
  /** A new API token with these scopes and this role on the test site. */
  token(scopes: string[], role?: SiteRole): Promise<TestClient>;
  /** No credentials at all. */
  anonymous: TestClient;
  /** Stops the node and removes its data dir. */
  stop(): Promise<void>;
}

function client(url: string, headers: Record<string, string>): TestClient {
  return {
    async request(method, path, body) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      const json = text && (res.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as Record<string, unknown>) : null;
      return { status: res.status, headers: res.headers, body: json };
    },
  };
}

/**
 * Starts a node with `plugins` enabled (names, packages or paths, as PLUMB_PLUGINS takes them,
 * paths relative to `cwd`) and `env` as its environment (plugin settings included).
 */
export async function startPluginTestNode(options: { plugins: string[]; env?: Record<string, string>; cwd?: string }): Promise<PluginTestNode> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plumb-plugin-test-'));
  const env = { PLUMB_DATA_DIR: dataDir, PLUMB_PORT: '0', PLUMB_HOST: '127.0.0.1', PLUMB_LOG_LEVEL: 'silent', PLUMB_PLUGINS: options.plugins.join(','), ...options.env };
  let node: Awaited<ReturnType<typeof startNode>>;
  try {
    node = await startNode(loadConfig({ env, cwd: options.cwd }), { env, cwd: options.cwd });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const db = node.runtime.metadata();
  const team = await createTeam(db, { name: 'Plugin test team' });
  const site = await createSite(db, { teamId: team.id, domain: 'plugin-test.example' });
  let people = 0;

  return {
    url: node.url,
    team: { id: team.id },
    site: { id: site.id, domain: site.domain },
    async as(caller) {
      const role = caller === 'instance-owner' ? 'owner' : caller === 'instance-admin' ? 'admin' : 'user';
      const user = await createUser(db, { email: `${caller}-${++people}@plugin-test.example`, password: 'a long enough password', role });
      if (caller !== 'instance-owner' && caller !== 'instance-admin' && caller !== 'outsider') {
        await db.query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [site.id, user.id, caller]);
      }
      const session = await node.runtime.sessions.start(user.id, { remember: false });
      const cookie = session.setCookies.map((c) => c.split(';')[0]).join('; ');
      return { ...client(node.url, { Cookie: cookie }), user: { id: user.id, email: user.email } };
    },
    async token(scopes, role = 'viewer') {
      const owner = await createUser(db, { email: `token-owner-${++people}@plugin-test.example`, password: 'a long enough password', role: 'user' });
      await db.query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'owner')", [site.id, owner.id]);
      const { token } = await createApiClient(db, { name: 'plugin test', scopes: scopes as ApiScope[], sites: [{ siteId: site.id, role }], ownerUserId: owner.id });
      return client(node.url, { Authorization: `Bearer ${token}` });
    },
    anonymous: client(node.url, {}),
    async stop() {
      await node.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
