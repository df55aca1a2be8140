// The plugin contract: what a plugin module default-exports (`definePlugin({...})`) and the host API
// it is given. A plugin sees only this file's types and what lib/plugins/api.ts re-exports; it
// never receives Plumb's runtime. The API is versioned: a plugin names the version it targets in
// `apiVersion`, and Plumb refuses one it does not support, naming both.
import type { ServiceSchema } from 'moleculer';
import type { LeaderJob } from '../../cluster/leader-jobs.ts';
import type { Log } from '../log.ts';
import type { AnalyticsTableInfo, MetadataMigrationLevels, MetadataTableDump } from '../stores/archive.ts';

/** The plugin API this Plumb implements. A change that breaks plugins written for it takes a new number. */
export const PLUGIN_API_VERSION = 1;
export const SUPPORTED_PLUGIN_API_VERSIONS: readonly number[] = [1];

/** A plugin's name: lower-case letters, digits and dashes; its routes, tables, settings and scopes carry it. */
export const PLUGIN_NAME = /^[a-z][a-z0-9-]{0,30}[a-z0-9]$/;

interface SettingBase {
  description: string;
  /** Never logged, never shown back (passwords, keys). */
  secret?: boolean;
  /** Without a default, a setting is unset (undefined) unless `required`, which makes start-up fail without it. */
  required?: boolean;
}
export type PluginSettingSpec =
  | (SettingBase & { type: 'string'; default?: string; maxLength?: number })
  | (SettingBase & { type: 'int'; default?: number; min?: number; max?: number })
  | (SettingBase & { type: 'bool'; default?: boolean })
  | (SettingBase & { type: 'url'; default?: string; schemes?: readonly string[] })
  | (SettingBase & { type: 'enum'; default?: string; values: readonly string[] });

type ValueOf<S extends PluginSettingSpec> = S extends { type: 'int' } ? number : S extends { type: 'bool' } ? boolean : string;
type Given<S extends PluginSettingSpec> = S extends { default: unknown } ? true : S extends { required: true } ? true : false;

/** The settings object a plugin receives, typed from its declarations. */
export type SettingsOf<D extends Record<string, PluginSettingSpec>> = {
  readonly [K in keyof D]: Given<D[K]> extends true ? ValueOf<D[K]> : ValueOf<D[K]> | undefined;
};

/** An API-client scope a plugin's routes ask for (`access.site.scope`); its name is `<plugin>:<what>`. */
export interface PluginScope {
  name: string;
  description: string;
}

/** A webhook event type a plugin emits, added to the catalog of its node; its type is `<plugin>.<what>`. */
export interface PluginWebhookEvent {
  type: string;
  description: string;
  /** 'site': about one site (its `fields` include `site_id`), for that site's and the instance's webhooks; 'instance': instance webhooks only. */
  scope: 'site' | 'instance';
  /** The fields of the event's `data`, in the order they are sent. */
  fields: readonly string[];
}

/**
 * How the dashboard writes a value, in the reader's locale: `number` (the default) as a number,
 * `bytes` as a size in 1024-based units with one decimal ("8.1 KiB"), `datetime` an RFC 3339
 * string as a date and a time, `country` an ISO 3166-1 alpha-2 code as the country's name (other
 * text as it is).
 */
export type PluginValueFormat = 'number' | 'bytes' | 'datetime' | 'country';
export const PLUGIN_VALUE_FORMATS: readonly PluginValueFormat[] = ['number', 'bytes', 'datetime', 'country'];

/** The bounds of a panel's `refreshSeconds`, whole seconds. */
export const PANEL_REFRESH_SECONDS = { min: 2, max: 3600 } as const;

/**
 * A panel on the site dashboard, drawn by the dashboard from one of the plugin's GET routes (no
 * plugin code runs in the browser). The dashboard calls the route with the range's `from` and `to`
 * (YYYY-MM-DD in the site's time zone) and draws its JSON answer.
 */
export type PluginPanel = {
  /** Unique among the plugin's panels. */
  id: string;
  title: string;
  /** The route, below /api/sites/:id/plugins/<plugin> (below /api/plugins/<plugin> on the admin page), e.g. `/notes`; served as GET. */
  path: string;
  /** What to show when there is nothing (an empty table, no KPIs). */
  empty?: string;
  /** Read the route again every this many seconds (a whole number from 2 to 3600) while the page is open and visible. */
  refreshSeconds?: number;
  /**
   * Buttons above the panel, on the site dashboard only (the admin page has its own `actions`).
   * Each POSTs to one of the plugin's site routes with the dashboard's range as its body,
   * `{ "from": "YYYY-MM-DD", "to": "YYYY-MM-DD" }` (the days the panel is read for, in the site's
   * time zone, `to` included), shows the answer's `message`, and the plugin's panels are read
   * again. Its route must declare `access.site`: the button is drawn only for the site roles it allows.
   */
  actions?: readonly PluginAction[];
} & (
  | {
      kind: 'table';
      /** The answer's field holding the rows. */
      items: string;
      columns: readonly { key: string; label: string; numeric?: boolean; format?: PluginValueFormat }[];
      /** Buttons on every row; the table is read again after one succeeds. */
      rowActions?: readonly PluginRowAction[];
    }
  | { kind: 'kpis'; /** The answer's numeric fields, one card each. */ kpis: readonly { key: string; label: string; format?: PluginValueFormat }[] }
);

/**
 * A button that POSTs to one of the plugin's routes (below the path its descriptor's routes live
 * under), after asking `confirm` when given, and shows the answer's `message`.
 */
export interface PluginAction {
  id: string;
  label: string;
  /** Served as POST. */
  path: string;
  /** Asked before it runs. */
  confirm?: string;
  /**
   * The browser goes on to the answer's `url` (an absolute http or https URL) instead of showing
   * its `message`: how a button starts a flow on another site, such as an OAuth consent screen.
   */
  opensUrl?: boolean;
  /**
   * In a settings section only: the button is drawn while the section's GET answer has `field` (a
   * field of its schema) equal to one of `in`, so it offers what fits the state ("Connect" until
   * connected, "Disconnect" after).
   */
  shownWhen?: { field: string; in: readonly (string | number | boolean | null)[] };
}

/**
 * A button on each row of a table panel. `path` may hold `{field}` segments filled from the row,
 * URL-encoded (`/backups/{id}`), each standing for a `:param` segment of the route the plugin
 * serves with `method` (`DELETE …/backups/:id`); a row without the field (or with it empty) gets
 * the button disabled. An error answer's `message` shows beside the table.
 */
export interface PluginRowAction {
  /** Unique among the panel's row actions. */
  id: string;
  label: string;
  method: 'POST' | 'DELETE';
  path: string;
  /** Asked before it runs. */
  confirm?: string;
  /** Drawn as a destructive button. */
  danger?: boolean;
}

/**
 * A field of a plugin's settings form: a string (a choice when it has `enum` or `choicesFrom`), an
 * integer or a boolean; or, `readOnly`, a value the plugin reports shown beside those a person sets
 * (which may be an `array` of strings).
 */
export interface PluginFormField {
  type: 'string' | 'integer' | 'boolean' | 'array';
  title: string;
  description?: string;
  enum?: readonly string[];
  /**
   * A string field chosen from a list the plugin reports: the name of a read-only `array` field of
   * the section, whose values (as the GET answer gives them) are the choices. The plugin's PUT still
   * checks the value.
   */
  choicesFrom?: string;
  /** A read-only field the section reads (for a `shownWhen` or a `choicesFrom`) but does not show. */
  hidden?: boolean;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  /** May be left empty (sent as null). */
  nullable?: boolean;
  /** Shown with its value (what the plugin reports), never editable and never sent back with PUT. */
  readOnly?: boolean;
  /** How a read-only field's value is written. */
  format?: PluginValueFormat;
}

/**
 * A section of a site's settings page, generated from a JSON schema: the dashboard reads the
 * values with GET on `path` and saves them with PUT on it (the server's field errors show under
 * their fields); `actions` are buttons that POST to their own routes and show the answer's `message`.
 */
export interface PluginSettingsSection {
  id: string;
  title: string;
  description?: string;
  /** A route below /api/sites/:id/plugins/<plugin>, served as GET and PUT. */
  path: string;
  schema: { type: 'object'; properties: Readonly<Record<string, PluginFormField>>; required?: readonly string[] };
  actions?: readonly PluginAction[];
}

/**
 * Metadata rows a plugin keeps, in a PostgreSQL schema of its own (`plugin_<name>`, first on the
 * search path), so its SQL names its tables plainly.
 */
export interface PluginMetadataStore {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[]; rowCount: number | null }>;
  /**
   * One transaction. With `fencedBy` (a leader job's epoch) it first checks that no newer leader
   * has claimed the cluster, and rejects, writing nothing, when one has: a deposed leader's writes
   * never land.
   */
  transaction<T>(work: (tx: Pick<PluginMetadataStore, 'query'>) => Promise<T>, options?: { fencedBy?: number }): Promise<T>;
}

/** What a plugin may ask for beyond the host API; the operator grants it by enabling the plugin, and GET /api/admin/plugins lists it. */
export type PluginCapability = 'archive';
export const PLUGIN_CAPABILITIES: readonly PluginCapability[] = ['archive'];

/** A metadata table as a dump holds it: schema, table, rows, and the file's name in the dump's folder. */
export type ArchivedMetadataTable = MetadataTableDump;
/** A table of a team's analytics database: its name, CREATE statement and (approximate) rows. */
export type ArchivedAnalyticsTable = AnalyticsTableInfo;

/**
 * The `archive` capability: a copy of everything Plumb keeps, for backups and retention. Files are
 * written on this machine (in folders the plugin chooses); where they go next is the plugin's business.
 */
export interface PluginArchiveAccess {
  readonly plumbVersion: string;
  readonly stores: { metadata: 'pglite' | 'postgres'; analytics: 'chdb' | 'clickhouse' };
  /**
   * The instance secret (PLUMB_JWT_SECRET, or the one generated into the data dir): it signs
   * sessions and seals stored secrets (authenticator seeds, webhook signing secrets), which a
   * restore without it cannot read.
   */
  instanceSecret(): string;
  /** Every metadata table (Plumb's and its plugins') as one NDJSON file each in `dir`, from one snapshot; and the migrations the store records. */
  dumpMetadata(dir: string): Promise<{ tables: ArchivedMetadataTable[]; migrations: MetadataMigrationLevels }>;
  /** Every team's analytics database (`tenant_…`) and its tables. */
  analyticsDatabases(): Promise<{ database: string; tables: ArchivedAnalyticsTable[] }[]>;
  /** One analytics table, whole, as a Parquet file written by ClickHouse. */
  exportTable(database: string, table: string, filePath: string): Promise<void>;
  /** Plumb's analytics tables that hold a site's rows, and the time column retention cuts them by. */
  readonly siteTables: readonly { table: string; time: string }[];
  /** How many of the site's rows in `table` are older than `before`. */
  countSiteRows(siteId: string, table: string, before: Date): Promise<number>;
  /** The site's rows in `table` older than `before`, as a Parquet file. */
  exportSiteRows(siteId: string, table: string, before: Date, filePath: string): Promise<void>;
  /** Deletes the site's rows in `table` older than `before`; they are gone from reads when it resolves. */
  deleteSiteRows(siteId: string, table: string, before: Date): Promise<void>;
}

/**
 * A site's analytics database (its team's, on ClickHouse or chDB), as a plugin reaches it. SQL is
 * ClickHouse's; the database is bound as `{db:Identifier}` and values as `{name:Type}` parameters.
 * Queries may read Plumb's tables (hits, events, visits, …); inserts go only to the plugin's own
 * tables, `plugin_<name>_…`, which its analytics migrations create in every team's database
 * (applied on first use there, so new teams get them too).
 */
export interface PluginAnalytics {
  query<T = Record<string, unknown>>(siteId: string, sql: string, params?: Record<string, unknown>): Promise<T[]>;
  insert(siteId: string, table: string, rows: readonly Record<string, unknown>[]): Promise<void>;
}

/** An outbound request through Plumb's guarded client (no private addresses, no redirects followed, a deadline, a size cap). */
export interface PluginHttpRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole request, DNS to last body byte (default 10 s, at most 60 s). */
  timeoutMs?: number;
  /** Largest answer body accepted (default 1 MiB, at most 50 MiB). */
  maxBytes?: number;
  /**
   * Let this request reach loopback, private and reserved addresses too. Only for a destination
   * an operator named together with a setting that allows it (a model server on the same network,
   * a test double on loopback), as Plumb's own PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS does.
   */
  allowPrivate?: boolean;
}

/**
 * Encryption at rest for secrets a plugin must read back (OAuth refresh tokens, API keys people
 * give it): AES-256-GCM under a key derived from the instance secret for this plugin alone, the
 * same sealing Plumb uses for authenticator seeds and webhook signing secrets.
 */
export interface PluginSecrets {
  /** A sealed string (`v1.…`) to store; `boundTo` (e.g. the row's id) must be given again to open it. */
  seal(plain: string, boundTo: string): string;
  /** The plain text, or null when the value was tampered with, is bound elsewhere or sealed by another key. */
  open(sealed: string, boundTo: string): string | null;
}

/** A small key-value store of JSON values, the plugin's own, shared by every node. */
export interface PluginState {
  get<T = unknown>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
}

/** A site as a plugin may read it. */
export interface PluginSite {
  id: string;
  domain: string;
  team_id: string;
  timezone: string;
}

/** A goal of a site and its conversions over a range, as the dashboard's goals report counts them. */
export interface PluginGoalConversions {
  goal_id: string;
  name: string;
  /** Unique visitors with at least one matching pageview or event. */
  conversions: number;
  /** conversions as a percentage of the range's visitors, one decimal. */
  conversion_rate: number;
}

/** An entry in a team's audit log, written in the plugin's name (`action` is prefixed with it). */
export interface PluginAuditEntry {
  teamId: string;
  action: string;
  details: string;
  actor?: { id: string; email: string } | null;
  site?: { id: string; domain: string } | null;
}

/** What a plugin is given: everything it may reach of Plumb, and nothing else. */
export interface PluginHost<S = Record<string, unknown>> {
  readonly name: string;
  readonly settings: S;
  readonly log: Log;
  readonly metadata: PluginMetadataStore;
  readonly analytics: PluginAnalytics;
  /**
   * Plumb's one outbound HTTP client: the host is resolved once and every address checked (never
   * loopback, private or reserved), the connection pinned to it, redirects answered not followed,
   * proxies ignored. Throws an error whose `kind` says why (invalid_url, dns, blocked_address,
   * timeout, too_large, network).
   */
  fetch(url: string, request?: PluginHttpRequest): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>;
  readonly state: PluginState;
  /** Seals and opens the plugin's stored secrets. */
  readonly secrets: PluginSecrets;
  /** The public base URL people reach Plumb at (PLUMB_PUBLIC_URL), without a trailing slash: for redirect URIs and links. */
  readonly publicUrl: string;
  /** Live sites only; null for a deleted or unknown id. */
  site(id: string): Promise<PluginSite | null>;
  /**
   * The site's goals, most converting first, with their conversions over the days from–to (YYYY-MM-DD,
   * `to` included, in the site's time zone). A bad range rejects with Plumb's 400 naming the field.
   */
  goalConversions(siteId: string, days: { from: string; to: string }): Promise<PluginGoalConversions[]>;
  audit(entry: PluginAuditEntry): Promise<void>;
  /**
   * Queues a webhook event of a type the plugin declares, for every webhook subscribed to it,
   * through the same outbox, signing and retries as Plumb's own; durable once it resolves. `data`
   * is cut to the declared fields (missing ones sent as null).
   */
  emit(type: string, data: Record<string, unknown>): Promise<void>;
  /**
   * Runs `hook` once both stores are open and migrated (the plugin's own migrations included),
   * before the node reports ready; at once when they already are. Services start before the
   * stores open, so work that needs them at start waits here.
   */
  whenStoresReady(hook: () => Promise<void> | void): Promise<void>;
  /** Present only for a plugin that declares the `archive` capability. */
  readonly archive?: PluginArchiveAccess;
}

/** What a plugin contributes, each part built from its host when the node starts. */
/** A line a plugin shows on the system page (GET /api/admin/system), e.g. its last backup. */
export interface PluginStatusLine {
  label: string;
  value: string | number | null;
  format?: PluginValueFormat;
}

export interface PluginDefinition<D extends Record<string, PluginSettingSpec> = Record<string, PluginSettingSpec>> {
  name: string;
  version: string;
  apiVersion: number;
  description: string;
  settings?: D;
  /** Powers beyond the host API the plugin needs; each is shown to administrators with the plugin. */
  capabilities?: readonly PluginCapability[];
  /** API-client scopes the plugin's routes ask for, offered in the API-client form beside Plumb's own. */
  scopes?: readonly PluginScope[];
  /** What the dashboard shows of the plugin, described, never scripted. */
  dashboard?: {
    sitePanels?: readonly PluginPanel[];
    siteSettings?: readonly PluginSettingsSection[];
    /**
     * A page for instance administrators, reached from an entry in the dashboard's main menu: its
     * panels read GET routes below /api/plugins/<plugin> (guard them with `access: { instance: 'admin' }`),
     * and its `actions`, buttons above the panels, POST to routes there and then read the panels again.
     */
    adminPage?: { title: string; navLabel: string; panels: readonly PluginPanel[]; actions?: readonly PluginAction[] };
  };
  /** Webhook event types the plugin emits (`host.emit`), which webhooks may then subscribe to. */
  webhookEvents?: readonly PluginWebhookEvent[];
  /** A folder of numbered `.sql` files for the metadata store (NNNN_name.sql), applied in order and recorded. */
  metadataMigrations?: string;
  /**
   * A folder of numbered ClickHouse SQL files (NNNN_name.sql, statements ending in `;` at a line's
   * end) for every team's analytics database, bound as `{db:Identifier}`; tables named
   * `plugin_<name>_…`. Applied and recorded per database, before the plugin's first use of it.
   */
  analyticsMigrations?: string;
  /**
   * Moleculer services run on every node. Their names start with `plugins.<name>`; their actions
   * declare `rest`, `auth`, `access`, `params` and `openapi` like Plumb's own (use `action()`), on
   * routes under `/api/plugins/<name>/…` or `/api/sites/:id/plugins/<name>/…`.
   */
  services?(host: PluginHost<SettingsOf<D>>): ServiceSchema[];
  /** Work only the leader runs, started with its fencing epoch and stopped when it steps down. */
  leaderJobs?(host: PluginHost<SettingsOf<D>>): { name: string; job: LeaderJob }[];
  /** What the system page shows of the plugin's state: a reader called on every view (keep it cheap). */
  systemStatus?(host: PluginHost<SettingsOf<D>>): () => Promise<readonly PluginStatusLine[]>;
}

/** Declares a plugin; the identity function, there for the types it checks. */
export function definePlugin<const D extends Record<string, PluginSettingSpec>>(definition: PluginDefinition<D>): PluginDefinition<D> {
  return definition;
}

/** `archives-x` → `archives_x`: the plugin's part of table names, env names and flags. */
export const pluginKey = (name: string) => name.replace(/-/g, '_');
