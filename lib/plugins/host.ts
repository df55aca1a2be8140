// The host API a plugin is given (lib/plugins/contract.ts), built from the node's runtime, which
// the plugin never sees. A plugin's metadata SQL runs in a PostgreSQL schema of its own
// (`plugin_<name>`, on the search path), so its tables are its own by name and Plumb's are out of
// its way; its migrations run in the same schema.
import type { Runtime } from '../runtime.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { writeAudit } from '../audit/audit.ts';
import { withFields } from '../log.ts';
import { queueEvent } from '../webhooks/outbox.ts';
import { VERSION } from '../brand.ts';
import {
  analyticsDatabases,
  countOlderSiteRows,
  deleteOlderSiteRows,
  dumpMetadata,
  exportAnalyticsTable,
  exportOlderSiteRows,
  SITE_TABLE_TIMES,
} from '../stores/archive.ts';
import {
  type PluginAnalytics,
  type PluginArchiveAccess,
  type PluginCapability,
  type PluginHost,
  type PluginMetadataStore,
  type PluginWebhookEvent,
  pluginKey,
} from './contract.ts';
import { pathToFileURL } from 'node:url';
import { liveSite } from '../sites/sites.ts';
import { parseRange } from '../analytics/range.ts';
import { goalStats } from '../goals/conversions.ts';
import { siteGoals } from '../goals/goals.ts';
import { guardedRequest, OutboundError } from '../net/guarded-fetch.ts';
import { createSecretBox } from '../auth/secret-box.ts';
import { loadMigrations, migrateTenant } from '../stores/analytics/migrations.ts';

/** The PostgreSQL schema that holds a plugin's tables. */
export const pluginSchema = (name: string) => `plugin_${pluginKey(name)}`;

/** SQL run inside a transaction whose search path is the plugin's schema. */
async function inSchema<T>(tx: MetadataQueryable, schema: string, work: () => Promise<T>): Promise<T> {
  // The schema name is the plugin's checked name (lower-case letters, digits, underscores): no user text.
  await tx.query(`SET LOCAL search_path TO ${schema}`);
  return work();
}

type HostRuntime = Pick<Runtime, 'metadata' | 'analytics' | 'sites' | 'log' | 'whenStoresReady' | 'fence' | 'jwtSecret'> & { config: Pick<Runtime['config'], 'publicUrl'> };

/** The plugin's side of its sites' analytics databases, its migrations applied to each before first use. */
function scopedAnalytics(runtime: HostRuntime, name: string, migrationsDir: string | undefined): PluginAnalytics {
  const prefix = `plugin_${pluginKey(name)}_`;
  const migrations = migrationsDir ? loadMigrations(pathToFileURL(migrationsDir.endsWith('/') ? migrationsDir : `${migrationsDir}/`)) : [];
  const migrated = new Map<string, Promise<void>>();
  const databaseOf = async (siteId: string): Promise<string> => {
    const site = await liveSite(runtime.sites, siteId);
    let ready = migrated.get(site.tenant);
    if (!ready) {
      ready = (async () => {
        await runtime.analytics().ensureTenant(site.team_id);
        if (migrations.length > 0) {
          await migrateTenant(runtime.analytics(), site.tenant, migrations, runtime.log, { table: `${prefix}schema_migrations`, what: `the ${name} plugin's tables in` });
        }
      })();
      migrated.set(site.tenant, ready);
      // A failure is not remembered: the next use tries again.
      ready.catch(() => migrated.delete(site.tenant));
    }
    await ready;
    return site.tenant;
  };
  return {
    async query(siteId, sql, params = {}) {
      return runtime.analytics().query(sql, { ...params, db: await databaseOf(siteId) });
    },
    async insert(siteId, table, rows) {
      if (!table.startsWith(prefix)) throw new Error(`plugin ${name} may insert only into its own tables (${prefix}…), not ${table}`);
      await runtime.analytics().insert(table, rows, { database: await databaseOf(siteId) });
    },
  };
}

function scopedMetadata(runtime: HostRuntime, schema: string): PluginMetadataStore {
  return {
    query: (sql, params) => runtime.metadata().transaction((tx) => inSchema(tx, schema, () => tx.query(sql, params))),
    transaction: (work, { fencedBy } = {}) => {
      const scoped = (tx: MetadataQueryable) => inSchema(tx, schema, () => work({ query: (sql, params) => tx.query(sql, params) }));
      return fencedBy === undefined ? runtime.metadata().transaction(scoped) : runtime.fence.run(fencedBy, scoped);
    },
  };
}

/** The archive capability: both stores read whole, a site's old rows exported and deleted. */
function archiveAccess(runtime: HostRuntime): PluginArchiveAccess {
  const siteDatabase = async (siteId: string) => (await liveSite(runtime.sites, siteId)).tenant;
  return {
    plumbVersion: VERSION,
    get stores() {
      return { metadata: runtime.metadata().kind, analytics: runtime.analytics().kind };
    },
    instanceSecret: () => Buffer.from(runtime.jwtSecret).toString('utf8'),
    dumpMetadata: (dir) => dumpMetadata(runtime.metadata(), dir),
    analyticsDatabases: () => analyticsDatabases(runtime.analytics()),
    exportTable: (database, table, filePath) => exportAnalyticsTable(runtime.analytics(), database, table, filePath),
    siteTables: Object.entries(SITE_TABLE_TIMES).map(([table, time]) => ({ table, time })),
    countSiteRows: async (siteId, table, before) => countOlderSiteRows(runtime.analytics(), await siteDatabase(siteId), siteId, table, before),
    exportSiteRows: async (siteId, table, before, filePath) => exportOlderSiteRows(runtime.analytics(), await siteDatabase(siteId), siteId, table, before, filePath),
    deleteSiteRows: async (siteId, table, before) => deleteOlderSiteRows(runtime.analytics(), await siteDatabase(siteId), siteId, table, before),
  };
}

export interface HostWiring {
  /** The capabilities the plugin declared (and the operator granted by enabling it). */
  capabilities?: readonly PluginCapability[];
  /** The plugin's analytics migrations folder, if it has one. */
  analyticsMigrations?: string;
  /** The event types the plugin declared. */
  events: readonly PluginWebhookEvent[];
  /** Tells the webhook dispatcher there is something to send now (instead of at its next sweep). */
  notifyWebhooks(): void;
}

export function createPluginHost<S>(runtime: HostRuntime, name: string, settings: S, wiring: HostWiring): PluginHost<S> {
  const db = () => runtime.metadata();
  return {
    name,
    settings,
    log: withFields(runtime.log, { plugin: name }),
    metadata: scopedMetadata(runtime, pluginSchema(name)),
    analytics: scopedAnalytics(runtime, name, wiring.analyticsMigrations),
    state: {
      async get<T>(key: string) {
        const { rows } = await db().query<{ value: T }>('SELECT value FROM public.plugin_state WHERE plugin = $1 AND key = $2', [name, key]);
        return rows[0]?.value;
      },
      async set(key, value) {
        await db().query(
          `INSERT INTO public.plugin_state (plugin, key, value) VALUES ($1, $2, $3::jsonb)
           ON CONFLICT (plugin, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
          [name, key, JSON.stringify(value ?? null)],
        );
      },
      async delete(key) {
        await db().query('DELETE FROM public.plugin_state WHERE plugin = $1 AND key = $2', [name, key]);
      },
    },
    // One key per plugin: a plugin cannot open another's (or Plumb's own) sealed values.
    secrets: createSecretBox(runtime.jwtSecret, `plugin ${name}`),
    get publicUrl() {
      return runtime.config.publicUrl;
    },
    async site(id) {
      const site = await runtime.sites.byId(id);
      return site ? { id: site.id, domain: site.domain, team_id: site.team_id, timezone: site.timezone } : null;
    },
    async goalConversions(siteId, days) {
      const site = await liveSite(runtime.sites, siteId);
      const counted = await goalStats(runtime.analytics(), site, await siteGoals(db(), site.id), parseRange(days, site.timezone));
      return counted.map(({ goal_id, name, conversions, conversion_rate }) => ({ goal_id, name, conversions, conversion_rate }));
    },
    async audit(entry) {
      await writeAudit(db(), {
        teamId: entry.teamId,
        action: `${name}.${entry.action}`,
        actor: entry.actor ?? undefined,
        site: entry.site ?? undefined,
        details: entry.details,
      });
    },
    async emit(type, data) {
      const declared = wiring.events.find((event) => event.type === type);
      if (!declared) throw new Error(`plugin ${name} emits "${type}", which its webhookEvents do not declare`);
      const fields = Object.fromEntries(declared.fields.map((field) => [field, data[field] ?? null]));
      const siteId = declared.scope === 'site' && typeof fields.site_id === 'string' ? fields.site_id : null;
      await db().transaction((tx) => queueEvent(tx, { type, siteId, data: fields }));
      wiring.notifyWebhooks();
    },
    async fetch(url, request = {}) {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        throw new OutboundError('invalid_url', `${url} is not an absolute URL`);
      }
      return guardedRequest(target, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        timeoutMs: Math.min(request.timeoutMs ?? 10_000, 60_000),
        maxBytes: Math.min(request.maxBytes ?? 1_048_576, 52_428_800),
        allowPrivate: request.allowPrivate === true,
      });
    },
    whenStoresReady: (hook) => runtime.whenStoresReady(hook),
    archive: wiring.capabilities?.includes('archive') ? archiveAccess(runtime) : undefined,
  };
}
