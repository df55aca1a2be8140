// The search-console plugin (`PLUMB_PLUGINS=search-console`), written only against the plugin API
// (lib/plugins/api.ts). A site's admin connects the site to a Google account with the OAuth 2.0
// web flow (PKCE; the state, sealed by the plugin's secret box, binds the flow to the site, the
// person and ten minutes), picks one of the account's Search Console properties, and the leader
// then syncs the property's search analytics daily into the plugin's own analytics table (see
// sync.ts). The site's dashboard shows clicks, impressions, CTR and position over the range, the top
// queries, the top pages beside Plumb's own visits landing on them, countries and devices.
import { fileURLToPath } from 'node:url';
import { action, badGateway, conflict, DateTime, definePlugin, NoContent, nullable, object, PLUGIN_API_VERSION, type PluginHost, Type, validationFailed } from '../../lib/plugins/api.ts';
import { countryCodeOf } from './countries.ts';
import { authorizationUrl, createGoogleClient, type GoogleClient, GoogleError, type GoogleSettings, pkcePair } from './google.ts';
import { type Connection, type Dimension, isoDay, SyncStopped, syncSite, TABLE } from './sync.ts';

const NAME = 'search-console';
const SITE_ROUTES = `/api/sites/:id/plugins/${NAME}`;
const CALLBACK_PATH = `/api/plugins/${NAME}/oauth/callback`;
/** How long a started connection may take to come back from Google. */
const STATE_TTL_MS = 10 * 60_000;
/** What the sealed state is bound to: it opens only as a state of this flow. */
const STATE_BINDING = 'oauth-state';
/** A site is synced again this long after its last run ended (sooner when someone asks). */
const SYNC_EVERY_MS = 24 * 3_600_000;
/** A failed run is tried again after this long (sooner when someone asks). */
const RETRY_FAILED_MS = 3_600_000;

const tags = [`plugin: ${NAME}`];
const day = { type: 'string', pattern: /^\d{4}-\d{2}-\d{2}$/, optional: true } as const;
const range = { from: day, to: day };
const Property = object({ site_url: Type.String(), permission_level: Type.String() });
const ConnectionStatus = object({
  connected: Type.Boolean(),
  property: nullable(Type.String()),
  status: Type.String(),
  connected_by: nullable(Type.String()),
  available_properties: nullable(Type.String()),
  property_choices: Type.Array(Type.String(), { description: 'The properties the account can read (empty when not connected or when Google cannot list them)' }),
  synced_through: nullable(Type.String()),
  last_sync_finished_at: nullable(DateTime),
  last_error: nullable(Type.String()),
});
const Message = object({ message: Type.String() });
const Totals = {
  clicks: Type.Integer(),
  impressions: Type.Integer(),
  ctr: nullable(Type.Number({ description: 'Clicks per 100 impressions; null without impressions' })),
  position: nullable(Type.Number({ description: 'Average position, 1 the top; null without impressions' })),
};
const KeyRow = object({ key: Type.String(), ...Totals });
const PageRow = object({
  page: Type.String(),
  ...Totals,
  plumb_visits: Type.Integer({ description: 'Plumb’s visits that entered the site on this page in the range' }),
  plumb_pageviews: Type.Integer({ description: 'The pageviews of those visits' }),
});

interface ConnectionRow extends Connection {
  connected_by: string;
  last_sync_finished_at: string | null;
  last_error: string | null;
}
interface SealedState {
  site: string;
  user: string;
  verifier: string;
  expires: number;
}
type Meta = { user?: { id: string; email: string }; $statusCode?: number; $location?: string; $responseHeaders?: Record<string, string> };
type Host = PluginHost<GoogleSettings & { backfill_days: number; row_limit: number; check_every_seconds: number }>;

const googleFailure = (err: unknown) => badGateway(err instanceof GoogleError ? err.message : 'Google could not be reached');
const redirectUri = (host: Host) => `${host.publicUrl}${CALLBACK_PATH}`;
const CONNECTION_COLUMNS = `site_id, refresh_token, connected_by, property, to_char(synced_through, 'YYYY-MM-DD') AS synced_through,
  to_char(last_sync_finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_sync_finished_at, last_error`;

async function connectionOf(host: Host, siteId: string): Promise<ConnectionRow | undefined> {
  const { rows } = await host.metadata.query<ConnectionRow>(`SELECT ${CONNECTION_COLUMNS} FROM connections WHERE site_id = $1`, [siteId]);
  return rows[0];
}

/** A fresh access token of the site's connection (read here unless the caller has it); 409 when it has none. */
async function accessTokenOf(host: Host, google: GoogleClient, siteId: string, read?: ConnectionRow): Promise<string> {
  const connection = read ?? (await connectionOf(host, siteId));
  if (!connection) throw conflict('The site is not connected to Google Search Console: connect it first');
  const refreshToken = host.secrets.open(connection.refresh_token, siteId);
  if (!refreshToken) throw conflict('The stored Google authorisation cannot be read (was the instance secret changed?): connect the site again');
  try {
    return await google.accessToken(refreshToken);
  } catch (err) {
    throw googleFailure(err);
  }
}

/** The reports' range: the days asked for, else the last 28 days to yesterday (Search Console has no today yet). */
function rangeOf(params: { from?: string; to?: string }): { from: string; to: string } {
  const yesterday = isoDay(new Date(Date.now() - 86_400_000));
  const to = params.to ?? yesterday;
  const from = params.from ?? isoDay(new Date(Date.parse(`${to}T00:00:00Z`) - 27 * 86_400_000));
  if (from > to) throw validationFailed([{ field: 'from', message: 'from must not be after to', type: 'dateRange' }]);
  return { from, to };
}

/**
 * The newest copy of each day of one dimension for the site's property in the range (older copies
 * of a day, written by an earlier run or a deposed leader, are skipped; FINAL folds a copy's rows
 * that no merge has met yet).
 */
const LATEST = `FROM {db:Identifier}.${TABLE} FINAL
  WHERE site_id = {site:UUID} AND property = {property:String} AND dimension = {dimension:String} AND day BETWEEN {from:Date} AND {to:Date}
    AND (day, version) IN (
      SELECT day, max(version) FROM {db:Identifier}.${TABLE}
       WHERE site_id = {site:UUID} AND property = {property:String} AND dimension = {dimension:String} AND day BETWEEN {from:Date} AND {to:Date}
       GROUP BY day)`;
const SUMS = 'sum(clicks) AS clicks, sum(impressions) AS impressions, sum(position_sum) AS position_sum';

interface SumRow {
  clicks: string;
  impressions: string;
  position_sum: number;
}
const totalsOf = (row: SumRow | undefined) => {
  const clicks = Number(row?.clicks ?? 0);
  const impressions = Number(row?.impressions ?? 0);
  return {
    clicks,
    impressions,
    // Without impressions there is no rate and no position: 0 would read as a figure (position 0 above the top).
    ctr: impressions > 0 ? Math.round((clicks / impressions) * 10_000) / 100 : null,
    position: impressions > 0 ? Math.round((Number(row?.position_sum ?? 0) / impressions) * 10) / 10 : null,
  };
};

export default definePlugin({
  name: NAME,
  version: '1.0.0',
  apiVersion: PLUGIN_API_VERSION,
  description: 'Google Search Console’s clicks, impressions, queries and pages beside Plumb’s own figures',
  settings: {
    client_id: { type: 'string', maxLength: 512, description: 'The OAuth client ID of your Google Cloud project (a "Web application" client).' },
    client_secret: { type: 'string', maxLength: 512, secret: true, description: 'That OAuth client’s secret.' },
    authorize_url: { type: 'url', default: 'https://accounts.google.com/o/oauth2/v2/auth', description: 'Google’s OAuth 2.0 authorization endpoint.' },
    token_url: { type: 'url', default: 'https://oauth2.googleapis.com/token', description: 'Google’s OAuth 2.0 token endpoint.' },
    api_url: { type: 'url', default: 'https://www.googleapis.com/webmasters/v3', description: 'The Search Console API’s base URL.' },
    allow_private_endpoints: {
      type: 'bool',
      default: false,
      description: 'Let the three URLs above be loopback or private addresses (tests and development only: it removes the outbound address protection).',
    },
    backfill_days: { type: 'int', default: 486, min: 1, max: 486, description: 'How many days back a new connection fetches (Search Console keeps 16 months).' },
    row_limit: { type: 'int', default: 25_000, min: 1, max: 25_000, description: 'Rows asked for per searchAnalytics.query page.' },
    retry_base_ms: { type: 'int', default: 1000, min: 1, max: 60_000, description: 'First wait after a quota refusal (429 or rateLimitExceeded), doubled on each refusal in a row.' },
    check_every_seconds: { type: 'int', default: 300, min: 1, max: 86_400, description: 'How often the leader looks for sites due a sync (daily) or asked for one.' },
  },
  dashboard: {
    sitePanels: [
      {
        id: 'overview',
        title: 'Google Search',
        kind: 'kpis',
        path: '/overview',
        kpis: [
          { key: 'clicks', label: 'Clicks' },
          { key: 'impressions', label: 'Impressions' },
          { key: 'ctr', label: 'CTR (%)' },
          { key: 'position', label: 'Average position' },
        ],
      },
      {
        id: 'days',
        title: 'Google Search by day',
        kind: 'table',
        path: '/timeseries',
        items: 'days',
        columns: [
          { key: 'day', label: 'Day' },
          { key: 'clicks', label: 'Clicks', numeric: true },
          { key: 'impressions', label: 'Impressions', numeric: true },
          { key: 'ctr', label: 'CTR (%)', numeric: true },
          { key: 'position', label: 'Position', numeric: true },
        ],
        empty: 'No Search Console data for this range. Connect the site in its settings.',
      },
      {
        id: 'queries',
        title: 'Top search queries',
        kind: 'table',
        path: '/queries',
        items: 'queries',
        columns: [
          { key: 'key', label: 'Query' },
          { key: 'clicks', label: 'Clicks', numeric: true },
          { key: 'impressions', label: 'Impressions', numeric: true },
          { key: 'ctr', label: 'CTR (%)', numeric: true },
          { key: 'position', label: 'Position', numeric: true },
        ],
        empty: 'No search queries in this range.',
      },
      {
        id: 'pages',
        title: 'Top pages in Google Search',
        kind: 'table',
        path: '/pages',
        items: 'pages',
        columns: [
          { key: 'page', label: 'Page' },
          { key: 'clicks', label: 'Clicks', numeric: true },
          { key: 'impressions', label: 'Impressions', numeric: true },
          { key: 'position', label: 'Position', numeric: true },
          { key: 'plumb_visits', label: 'Visits landing (Plumb)', numeric: true },
          { key: 'plumb_pageviews', label: 'Their pageviews', numeric: true },
        ],
        empty: 'No pages in this range.',
      },
      {
        id: 'countries',
        title: 'Google Search by country',
        kind: 'table',
        path: '/countries',
        items: 'countries',
        columns: [
          { key: 'key', label: 'Country', format: 'country' },
          { key: 'clicks', label: 'Clicks', numeric: true },
          { key: 'impressions', label: 'Impressions', numeric: true },
          { key: 'ctr', label: 'CTR (%)', numeric: true },
        ],
        empty: 'No countries in this range.',
      },
      {
        id: 'devices',
        title: 'Google Search by device',
        kind: 'table',
        path: '/devices',
        items: 'devices',
        columns: [
          { key: 'key', label: 'Device' },
          { key: 'clicks', label: 'Clicks', numeric: true },
          { key: 'impressions', label: 'Impressions', numeric: true },
          { key: 'ctr', label: 'CTR (%)', numeric: true },
        ],
        empty: 'No devices in this range.',
      },
    ],
    siteSettings: [
      {
        id: 'connection',
        title: 'Google Search Console',
        description: 'Connect a Google account that can read this site in Search Console, then choose the property to sync.',
        path: '/connection',
        schema: {
          type: 'object',
          properties: {
            property: { type: 'string', title: 'Property', description: 'One the connected account can read in Search Console', nullable: true, choicesFrom: 'property_choices' },
            property_choices: { type: 'array', title: 'Properties to choose from', readOnly: true, hidden: true },
            connected: { type: 'boolean', title: 'Connected', readOnly: true, hidden: true },
            status: { type: 'string', title: 'Status', readOnly: true },
            connected_by: { type: 'string', title: 'Connected by', readOnly: true },
            available_properties: { type: 'string', title: 'Properties of the account', readOnly: true },
            synced_through: { type: 'string', title: 'Synced through', readOnly: true },
            last_sync_finished_at: { type: 'string', title: 'Last sync', readOnly: true, format: 'datetime' },
            last_error: { type: 'string', title: 'Last error', readOnly: true },
          },
        },
        actions: [
          { id: 'connect', label: 'Connect to Google', path: '/connect', opensUrl: true, shownWhen: { field: 'connected', in: [false] } },
          { id: 'sync', label: 'Sync now', path: '/sync', shownWhen: { field: 'connected', in: [true] } },
          {
            id: 'disconnect',
            label: 'Disconnect',
            path: '/disconnect',
            confirm: 'Disconnect the site from Google Search Console? Its Google authorisation is deleted.',
            shownWhen: { field: 'connected', in: [true] },
          },
        ],
      },
    ],
  },
  metadataMigrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  analyticsMigrations: fileURLToPath(new URL('./analytics/', import.meta.url)),

  leaderJobs(host) {
    const google = createGoogleClient((url, request) => host.fetch(url, request), host.settings);
    let timer: NodeJS.Timeout | undefined;
    let stopped = true;
    let running: Promise<void> | undefined;
    const due = async () => {
      const { rows } = await host.metadata.query<Connection>(
        `SELECT site_id, refresh_token, property, to_char(synced_through, 'YYYY-MM-DD') AS synced_through FROM connections
          WHERE property IS NOT NULL AND (
            last_sync_started_at IS NULL
            OR sync_requested_at > last_sync_started_at
            -- A run that never finished: a leader stepped down (or died) mid-sync.
            OR last_sync_finished_at IS NULL OR last_sync_finished_at < last_sync_started_at
            OR (last_error IS NULL AND last_sync_finished_at < now() - make_interval(secs => $1))
            OR (last_error IS NOT NULL AND last_sync_finished_at < now() - make_interval(secs => $2)))
          ORDER BY site_id`,
        [SYNC_EVERY_MS / 1000, RETRY_FAILED_MS / 1000],
      );
      return rows;
    };
    const runOnce = async (epoch: number) => {
      for (const connection of await due()) {
        if (stopped) return;
        const started = await host.metadata.transaction(
          (tx) => tx.query('UPDATE connections SET last_sync_started_at = now() WHERE site_id = $1 AND property = $2', [connection.site_id, connection.property]),
          { fencedBy: epoch },
        );
        if (!started.rowCount) continue;
        let error: string | null = null;
        try {
          const days = await syncSite(host, connection, { google, epoch, rowLimit: host.settings.row_limit, backfillDays: host.settings.backfill_days, stopped: () => stopped });
          host.log.info({ site: connection.site_id, days }, 'Search Console sync done');
        } catch (err) {
          if (err instanceof SyncStopped) return;
          error = err instanceof GoogleError ? err.message : `the sync failed: ${(err as Error).message}`;
          host.log.warn({ site: connection.site_id, err: error }, 'Search Console sync failed');
        }
        await host.metadata.transaction(
          (tx) => tx.query('UPDATE connections SET last_sync_finished_at = now(), last_error = $2 WHERE site_id = $1', [connection.site_id, error]),
          { fencedBy: epoch },
        );
      }
    };
    return [
      {
        name: 'sync',
        job: {
          start(epoch) {
            stopped = false;
            const tick = () => {
              if (running || stopped) return;
              running = runOnce(epoch)
                .catch((err: unknown) => host.log.warn({ err }, 'Search Console sync round failed'))
                .finally(() => {
                  running = undefined;
                });
            };
            timer = setInterval(tick, host.settings.check_every_seconds * 1000);
            timer.unref();
            void host.whenStoresReady(tick);
          },
          async stop() {
            stopped = true;
            clearInterval(timer);
            await running;
          },
        },
      },
    ];
  },

  services(host) {
    const google = createGoogleClient((url, request) => host.fetch(url, request), host.settings);
    const siteAdmin = { site: { param: 'id', role: 'admin' } } as const;
    const statsReader = { site: { param: 'id', role: 'viewer', scope: 'stats:read' } } as const;

    /** The connection as the settings section shows it; lists the account's properties when connected. */
    /** The connection's state; `listed`, the account's properties when the caller has just read them. */
    const statusOf = async (id: string, listed?: string[]) => {
      const connection = await connectionOf(host, id);
      if (!connection) {
        return {
          connected: false,
          property: null,
          status: 'Not connected',
          connected_by: null,
          available_properties: null,
          property_choices: [],
          synced_through: null,
          last_sync_finished_at: null,
          last_error: null,
        };
      }
      let choices: string[] = [];
      let available: string;
      try {
        choices = listed ?? (await google.properties(await accessTokenOf(host, google, id, connection))).map((p) => p.site_url);
        available = choices.join(', ') || 'none';
      } catch (err) {
        available = `Cannot list them: ${(err as Error).message}`;
      }
      return {
        connected: true,
        property: connection.property,
        status: !connection.property
          ? 'Connected: choose the property to sync'
          : // Until the first sync the dashboard's panels are empty: say why, and for how long.
            connection.synced_through === null && !connection.last_error
            ? 'Connected: nothing synced yet; the first sync runs within a few minutes'
            : 'Connected',
        connected_by: connection.connected_by,
        available_properties: available,
        property_choices: choices,
        synced_through: connection.synced_through,
        last_sync_finished_at: connection.last_sync_finished_at,
        last_error: connection.last_error,
      };
    };

    /** The rows of one dimension over the range, grouped by key, most clicks first. */
    const byKey = async (siteId: string, dimension: Dimension, params: { from?: string; to?: string; limit?: number }) => {
      const connection = await connectionOf(host, siteId);
      if (!connection?.property) return [];
      const rows = await host.analytics.query<SumRow & { key: string }>(
        siteId,
        `SELECT key, ${SUMS} ${LATEST} GROUP BY key ORDER BY clicks DESC, impressions DESC, key LIMIT {limit:UInt32}`,
        { site: siteId, property: connection.property, dimension, ...rangeOf(params), limit: params.limit ?? 50 },
      );
      // Google names devices DESKTOP, MOBILE, TABLET and countries by alpha-3 codes; Plumb's own panels
      // desktop, mobile, tablet and alpha-2 codes: one name for one thing.
      const keyOf = dimension === 'device' ? (key: string) => key.toLowerCase() : dimension === 'country' ? countryCodeOf : (key: string) => key;
      return rows.map((row) => ({ key: keyOf(row.key), ...totalsOf(row) }));
    };
    const reportParams = { id: 'uuid', ...range, limit: { type: 'number', integer: true, convert: true, min: 1, max: 500, optional: true } };
    const keyReport = (dimension: Dimension, field: string, summary: string) =>
      action({
        rest: `GET ${SITE_ROUTES}/${field}`,
        auth: 'any',
        access: statsReader,
        params: reportParams,
        openapi: { summary, tags, response: Type.Object({ [field]: Type.Array(KeyRow) }) },
        async handler(ctx) {
          const { id, ...params } = ctx.params as { id: string; from?: string; to?: string; limit?: number };
          return { [field]: await byKey(id, dimension, params) };
        },
      });

    return [
      {
        name: `plugins.${NAME}`,
        settings: { rest: '/' },
        actions: {
          connection: action({
            rest: `GET ${SITE_ROUTES}/connection`,
            auth: 'user',
            access: siteAdmin,
            params: { id: 'uuid' },
            openapi: { summary: 'Whether the site is connected to Search Console, to which property, and how far its sync got (site admins)', tags, response: ConnectionStatus },
            handler: (ctx) => statusOf(ctx.params.id as string),
          }),

          connect: action({
            rest: `POST ${SITE_ROUTES}/connect`,
            auth: 'user',
            access: siteAdmin,
            params: { id: 'uuid' },
            openapi: {
              summary: 'Start connecting the site to a Google account (site admins): the Google consent URL to send the browser to',
              tags,
              response: object({ url: Type.String(), message: Type.String() }),
              errors: [409],
            },
            async handler(ctx) {
              if (!host.settings.client_id || !host.settings.client_secret) {
                throw conflict('The search-console plugin has no Google OAuth client: set PLUMB_SEARCH_CONSOLE_CLIENT_ID and PLUMB_SEARCH_CONSOLE_CLIENT_SECRET');
              }
              const user = (ctx.meta as Meta).user as { id: string };
              const { verifier, challenge } = pkcePair();
              // The verifier travels inside the sealed state: nothing to store, nothing to read for anyone but this node.
              const sealed: SealedState = { site: ctx.params.id as string, user: user.id, verifier, expires: Date.now() + STATE_TTL_MS };
              const state = host.secrets.seal(JSON.stringify(sealed), STATE_BINDING);
              return { url: authorizationUrl(host.settings, redirectUri(host), state, challenge), message: 'Continue at Google to allow access.' };
            },
          }),

          callback: action({
            rest: `GET ${CALLBACK_PATH}`,
            auth: 'user',
            params: {
              state: { type: 'string', min: 1, max: 4096 },
              code: { type: 'string', min: 1, max: 4096, optional: true },
              error: { type: 'string', max: 256, optional: true },
            },
            openapi: {
              summary: 'Where Google sends the browser back: checks the state (the same person, site and flow, within ten minutes), exchanges the code and stores the refresh token sealed; redirects (303) to the site’s settings',
              tags,
              successStatus: 303,
              response: NoContent,
              errors: [409, 502],
            },
            async handler(ctx) {
              const { state, code, error } = ctx.params as { state: string; code?: string; error?: string };
              const meta = ctx.meta as Meta;
              const opened = host.secrets.open(state, STATE_BINDING);
              const flow = opened ? (JSON.parse(opened) as SealedState) : null;
              if (!flow || flow.user !== meta.user?.id || flow.expires < Date.now()) {
                throw validationFailed([{ field: 'state', message: 'state is not one this server issued to you in the last ten minutes: start connecting again', type: 'state' }]);
              }
              const site = await host.site(flow.site);
              if (!site) throw conflict('The site no longer exists');
              if (error) throw conflict(`Google did not grant access (${error})`);
              if (!code) throw validationFailed([{ field: 'code', message: 'code is required', type: 'required' }]);
              let refreshToken: string;
              try {
                refreshToken = (await google.exchangeCode(code, flow.verifier, redirectUri(host))).refreshToken;
              } catch (err) {
                throw googleFailure(err);
              }
              const user = meta.user as { id: string; email: string };
              await host.metadata.query(
                `INSERT INTO connections (site_id, refresh_token, connected_by) VALUES ($1, $2, $3)
                 ON CONFLICT (site_id) DO UPDATE SET refresh_token = EXCLUDED.refresh_token, connected_by = EXCLUDED.connected_by, connected_at = now(), last_error = NULL`,
                [site.id, host.secrets.seal(refreshToken, site.id), user.email],
              );
              await host.audit({ teamId: site.team_id, action: 'connected', actor: user, site: { id: site.id, domain: site.domain }, details: `connected ${site.domain} to Google Search Console` });
              meta.$statusCode = 303;
              meta.$location = `${host.publicUrl}/sites/${site.id}/settings`;
              meta.$responseHeaders = { 'Cache-Control': 'no-store' };
              return null;
            },
          }),

          properties: action({
            rest: `GET ${SITE_ROUTES}/properties`,
            auth: 'user',
            access: siteAdmin,
            params: { id: 'uuid' },
            openapi: { summary: 'The Search Console properties the connected Google account can read (site admins)', tags, response: object({ properties: Type.Array(Property) }), errors: [409, 502] },
            async handler(ctx) {
              const accessToken = await accessTokenOf(host, google, ctx.params.id as string);
              try {
                return { properties: await google.properties(accessToken) };
              } catch (err) {
                throw googleFailure(err);
              }
            },
          }),

          select: action({
            rest: `PUT ${SITE_ROUTES}/connection`,
            auth: 'user',
            access: siteAdmin,
            params: { id: 'uuid', property: { type: 'string', trim: true, max: 2048, nullable: true } },
            openapi: {
              summary: 'Choose the property to sync, one the account can read (site admins); a new property is synced from its oldest day, null stops syncing',
              tags,
              response: ConnectionStatus,
              errors: [409, 502],
            },
            async handler(ctx) {
              const { id, property } = ctx.params as { id: string; property: string | null };
              const chosen = property === '' ? null : property;
              const connection = await connectionOf(host, id);
              if (!connection) throw conflict('The site is not connected to Google Search Console: connect it first');
              // Clearing the property needs nothing of Google (which may be unreachable); choosing one checks the account can read it.
              let listed: string[] | undefined;
              if (chosen !== null) {
                const accessToken = await accessTokenOf(host, google, id, connection);
                try {
                  listed = (await google.properties(accessToken)).map((p) => p.site_url);
                } catch (err) {
                  throw googleFailure(err);
                }
                if (!listed.includes(chosen)) {
                  throw validationFailed([{ field: 'property', message: `property must be one the account can read: ${listed.join(', ') || 'it can read none'}`, type: 'enumValue' }]);
                }
              }
              await host.metadata.query(
                `UPDATE connections SET property = $2,
                   synced_through = CASE WHEN property IS NOT DISTINCT FROM $2 THEN synced_through END,
                   sync_requested_at = CASE WHEN property IS NOT DISTINCT FROM $2 THEN sync_requested_at ELSE now() END
                 WHERE site_id = $1`,
                [id, chosen],
              );
              const site = await host.site(id);
              const user = (ctx.meta as Meta).user ?? null;
              if (site) await host.audit({ teamId: site.team_id, action: 'property.selected', actor: user, site: { id, domain: site.domain }, details: `chose the Search Console property ${chosen ?? '(none)'} for ${site.domain}` });
              return statusOf(id, listed);
            },
          }),

          sync: action({
            rest: `POST ${SITE_ROUTES}/sync`,
            auth: 'user',
            access: siteAdmin,
            params: { id: 'uuid' },
            openapi: { summary: 'Ask the leader to sync the site now (site admins)', tags, successStatus: 202, response: Message, errors: [409] },
            async handler(ctx) {
              const { rowCount } = await host.metadata.query('UPDATE connections SET sync_requested_at = now() WHERE site_id = $1 AND property IS NOT NULL', [ctx.params.id]);
              if (!rowCount) throw conflict('The site has no Search Console property to sync: connect it and choose one first');
              (ctx.meta as Meta).$statusCode = 202;
              return { message: 'The sync starts within a few minutes.' };
            },
          }),

          disconnect: action({
            rest: `POST ${SITE_ROUTES}/disconnect`,
            auth: 'user',
            access: siteAdmin,
            params: { id: 'uuid' },
            openapi: { summary: 'Disconnect the site (site admins): its Google authorisation and sync state are deleted; synced figures stay', tags, response: Message },
            async handler(ctx) {
              const id = ctx.params.id as string;
              const { rowCount } = await host.metadata.query('DELETE FROM connections WHERE site_id = $1', [id]);
              const site = await host.site(id);
              const user = (ctx.meta as Meta).user ?? null;
              if (site && rowCount) await host.audit({ teamId: site.team_id, action: 'disconnected', actor: user, site: { id, domain: site.domain }, details: `disconnected ${site.domain} from Google Search Console` });
              return { message: rowCount ? 'Disconnected from Google Search Console.' : 'The site was not connected.' };
            },
          }),

          overview: action({
            rest: `GET ${SITE_ROUTES}/overview`,
            auth: 'any',
            access: statsReader,
            params: { id: 'uuid', ...range },
            openapi: { summary: 'Clicks, impressions, CTR and average position from Google Search over the days from–to (the last 28 days by default)', tags, response: object(Totals) },
            async handler(ctx) {
              const { id, ...params } = ctx.params as { id: string; from?: string; to?: string };
              const connection = await connectionOf(host, id);
              if (!connection?.property) return totalsOf(undefined);
              const [row] = await host.analytics.query<SumRow>(id, `SELECT ${SUMS} ${LATEST}`, { site: id, property: connection.property, dimension: 'device', ...rangeOf(params) });
              return totalsOf(row);
            },
          }),

          timeseries: action({
            rest: `GET ${SITE_ROUTES}/timeseries`,
            auth: 'any',
            access: statsReader,
            params: { id: 'uuid', ...range },
            openapi: { summary: 'The same figures for each day of the range that has data', tags, response: object({ days: Type.Array(object({ day: Type.String(), ...Totals })) }) },
            async handler(ctx) {
              const { id, ...params } = ctx.params as { id: string; from?: string; to?: string };
              const connection = await connectionOf(host, id);
              if (!connection?.property) return { days: [] };
              const rows = await host.analytics.query<SumRow & { day: string }>(id, `SELECT day, ${SUMS} ${LATEST} GROUP BY day ORDER BY day`, {
                site: id,
                property: connection.property,
                dimension: 'device',
                ...rangeOf(params),
              });
              // A Date comes as YYYY-MM-DD in JSON.
              return { days: rows.map((row) => ({ day: String(row.day), ...totalsOf(row) })) };
            },
          }),

          queries: keyReport('query', 'queries', 'The top search queries of the range, most clicks first'),
          countries: keyReport('country', 'countries', 'Google Search by searcher’s country (ISO 3166-1 alpha-2, as Plumb names them; a code outside ISO 3166-1 as Google gives it), most clicks first'),
          devices: keyReport('device', 'devices', 'Google Search by device (desktop, mobile, tablet, as Plumb names them), most clicks first'),

          pages: action({
            rest: `GET ${SITE_ROUTES}/pages`,
            auth: 'any',
            access: statsReader,
            params: reportParams,
            openapi: { summary: 'The top pages in Google Search of the range, with Plumb’s visits that entered the site on each (by path)', tags, response: object({ pages: Type.Array(PageRow) }) },
            async handler(ctx) {
              const { id, limit, ...params } = ctx.params as { id: string; from?: string; to?: string; limit?: number };
              const connection = await connectionOf(host, id);
              if (!connection?.property) return { pages: [] };
              const timezone = (await host.site(id))?.timezone ?? 'UTC';
              // A visit's rows sum their sign to 1; its entry page and start never change (visits migration).
              const rows = await host.analytics.query<SumRow & { page: string; plumb_visits: string; plumb_pageviews: string }>(
                id,
                `SELECT g.key AS page, g.clicks AS clicks, g.impressions AS impressions, g.position_sum AS position_sum,
                        v.visits AS plumb_visits, v.pageviews AS plumb_pageviews
                   FROM (SELECT key, ${SUMS} ${LATEST} GROUP BY key ORDER BY clicks DESC, impressions DESC, key LIMIT {limit:UInt32}) AS g
                   LEFT JOIN (SELECT entry_page, sum(sign) AS visits, sum(sign * visit_pageviews) AS pageviews
                                FROM {db:Identifier}.visits
                               WHERE site_id = {site:UUID} AND toDate(start, {tz:String}) BETWEEN {from:Date} AND {to:Date}
                               GROUP BY entry_page) AS v ON v.entry_page = path(g.key)
                  ORDER BY clicks DESC, impressions DESC, page`,
                { site: id, property: connection.property, dimension: 'page', tz: timezone, ...rangeOf(params), limit: limit ?? 50 },
              );
              return {
                pages: rows.map((row) => ({ page: row.page, ...totalsOf(row), plumb_visits: Number(row.plumb_visits ?? 0), plumb_pageviews: Number(row.plumb_pageviews ?? 0) })),
              };
            },
          }),
        },
      },
    ];
  },
});
