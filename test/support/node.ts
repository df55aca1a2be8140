// Test harness: a whole Plumb node in the test process (real gateway, real embedded stores, port
// 0), plus seeding helpers that write through the same lib functions the product uses.
import { rmSync } from 'node:fs';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import type { ApiScope, SiteRole } from '../../lib/auth/roles.ts';
import { loadConfig } from '../../lib/config.ts';
import { type PlumbNode, type StartOptions, startNode } from '../../lib/node.ts';
import { createSite, createTeam, type Site } from '../../lib/sites/sites.ts';
import { tempDataDirWithPglite, waitFor } from './instance.ts';

export interface TestNode {
  node: PlumbNode;
  url: string;
  dataDir: string;
  team: { id: string };
  site: Site;
  /** Another site of the same team, for cross-site checks. */
  otherSite: Site;
  token(scopes: ApiScope[], sites?: { siteId: string; role: SiteRole }[]): Promise<string>;
  /** Rows of a tenant table, after waiting until `count` are there (the writer is asynchronous). */
  rows<T = Record<string, unknown>>(table: string, count: number, where?: string, params?: Record<string, unknown>): Promise<T[]>;
  /** Rows now, without waiting (to prove nothing was stored). */
  rowsNow<T = Record<string, unknown>>(table: string, where?: string, params?: Record<string, unknown>): Promise<T[]>;
  stop(): Promise<void>;
}

/** Below jest's hook timeout, so a slow start fails here, where the late node can still be stopped. */
const START_TIMEOUT_MS = 45_000;

/**
 * A node still starting when its test gave up would keep chDB's one data directory per process
 * open, and every later test file of the run would fail to open its own: it is stopped as soon
 * as it is up.
 */
async function startWithin(starting: Promise<PlumbNode>, ms: number): Promise<PlumbNode> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      starting.then((node) => node.stop(), () => undefined);
      reject(new Error(`the test node did not start within ${ms / 1000} s`));
    }, ms);
  });
  try {
    return await Promise.race([starting, late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function startTestNode(env: Record<string, string> = {}, options: Pick<StartOptions, 'firstPartyPlugins' | 'cwd'> = {}): Promise<TestNode> {
  const dataDir = await tempDataDirWithPglite('plumb-node-');
  const nodeEnv = { PLUMB_DATA_DIR: dataDir, PLUMB_PORT: '0', PLUMB_HOST: '127.0.0.1', PLUMB_LOG_LEVEL: 'silent', PLUMB_INGEST_FLUSH_MS: '50', ...env };
  const config = loadConfig({ env: nodeEnv });
  // Plugins read their settings from the same env as the node's own.
  const node = await startWithin(startNode(config, { env: nodeEnv, ...options }), START_TIMEOUT_MS);
  const metadata = node.runtime.metadata();
  const analytics = node.runtime.analytics();
  const team = await createTeam(metadata, { name: 'Test team' });
  const site = await createSite(metadata, { teamId: team.id, domain: 'example.com', hostnames: ['shop.example.net'] });
  const otherSite = await createSite(metadata, { teamId: team.id, domain: 'other.example' });
  await analytics.ensureTenant(team.id);
  const tenant = analytics.tenantDatabase(team.id);

  // `where` is written by the tests themselves; values still go in as bound parameters. Rows come
  // in time order: a visit's time is its start, every other row's its ts.
  const rowsNow = <T>(table: string, where = '1', params: Record<string, unknown> = {}) =>
    analytics.query<T>(`SELECT * FROM {db:Identifier}.{table:Identifier} WHERE ${where} ORDER BY ${table === 'visits' ? 'start' : 'ts'}`, { ...params, db: tenant, table });

  return {
    node,
    url: node.url,
    dataDir,
    team,
    site,
    otherSite,
    async token(scopes, sites = [{ siteId: site.id, role: 'editor' }]) {
      return (await createApiClient(metadata, { name: 'test client', scopes, sites })).token;
    },
    async rows<T>(table: string, count: number, where = '1', params: Record<string, unknown> = {}) {
      let found: T[] = [];
      await waitFor(
        async () => {
          found = await rowsNow<T>(table, where, params);
          return found.length >= count;
        },
        10_000,
        () => `expected ${count} rows in ${table} where ${where}, found ${found.length}`,
      );
      return found;
    },
    rowsNow,
    async stop() {
      await node.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
