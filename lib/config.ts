// The one config loader: every setting is declared once in SETTINGS below, read from flags
// (Go style: -name value, -name=value, --name value, --name=value), then env, then its default.
// `plumb --help` and the README table are generated from the same list.
import { hostname } from 'node:os';
import { envName } from './brand.ts';
import { ConfigError } from './errors.ts';
import { BUNDLED_GEO_DATABASE } from './ingest/enrich/geo-licence.ts';

type SettingType = 'string' | 'int' | 'bool' | 'url' | 'enum' | 'list';

interface SettingSpec {
  /** Flag name without dashes; the camelCase of it is the config key. */
  flag: string;
  /** Env names, first wins. */
  env: string[];
  type: SettingType;
  default: string | number | boolean | string[] | undefined;
  description: string;
  min?: number;
  max?: number;
  values?: readonly string[];
  /** URL schemes accepted for type 'url'. */
  schemes?: readonly string[];
  secret?: boolean;
}

export const LOG_LEVELS = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

export const SETTINGS = [
  // Node
  { flag: 'data-dir', env: [envName('DATA_DIR')], type: 'string', default: './data', description: 'Directory for the embedded stores and the generated JWT secret.' },
  { flag: 'port', env: [envName('PORT'), 'PORT'], type: 'int', default: 8080, min: 0, max: 65535, description: 'HTTP port (0 picks a free port).' },
  { flag: 'host', env: [envName('HOST')], type: 'string', default: '0.0.0.0', description: 'Address the HTTP server binds to.' },
  { flag: 'public-url', env: [envName('PUBLIC_URL')], type: 'url', default: undefined, schemes: ['http:', 'https:'], description: 'Public base URL as users reach it (default http://localhost:<port>). Secure cookies when https.' },
  { flag: 'log-level', env: [envName('LOG_LEVEL')], type: 'enum', default: 'info', values: LOG_LEVELS, description: 'Log level; JSON lines on stdout, human-readable on a terminal when the optional pino-pretty package is installed.' },
  { flag: 'node-id', env: [envName('NODE_ID')], type: 'string', default: undefined, description: 'Moleculer node id (default <hostname>-<pid>).' },
  { flag: 'namespace', env: [envName('NAMESPACE')], type: 'string', default: 'plumb', description: 'Moleculer namespace; nodes of one cluster share it.' },
  { flag: 'request-timeout-ms', env: [envName('REQUEST_TIMEOUT_MS')], type: 'int', default: 30000, min: 100, max: 600000, description: 'Timeout of one action call between services, in milliseconds. Tracker ingest has none: it answers when its journal write does.' },
  { flag: 'shutdown-timeout-ms', env: [envName('SHUTDOWN_TIMEOUT_MS')], type: 'int', default: 8000, min: 100, max: 60000, description: 'How long a SIGTERM waits for in-flight requests before closing stores.' },
  { flag: 'api-body-limit-bytes', env: [envName('API_BODY_LIMIT_BYTES')], type: 'int', default: 1048576, min: 1024, max: 104857600, description: 'Largest JSON body accepted on /api routes (413 beyond it).' },
  { flag: 'plugins', env: [envName('PLUGINS')], type: 'list', default: [], description: 'Comma-separated optional plugins to enable.' },
  { flag: 'tracker-script-path', env: [envName('TRACKER_SCRIPT_PATH')], type: 'string', default: '/plumb.js', description: 'Path the tracking script is served at.' },
  { flag: 'tracker-http', env: [envName('TRACKER_HTTP')], type: 'enum', default: 'direct', values: ['direct', 'node'], description: "How the tracking script's requests (POST /ingest, /ingest/event, /ingest/web-vitals) are read. direct: by Plumb itself, which answers them faster, while a connection carries nothing else; a connection's first other request, and everything after it, goes to Node's HTTP server. node: every request is read by Node's HTTP server." },
  { flag: 'metrics-token', env: [envName('METRICS_TOKEN')], type: 'string', default: undefined, secret: true, description: 'Serves GET /metrics (Prometheus text format) on the HTTP port to requests with `Authorization: Bearer <token>`. Unset (and no -metrics-address): no metrics endpoint.' },
  { flag: 'metrics-address', env: [envName('METRICS_ADDRESS')], type: 'string', default: undefined, description: 'host:port of a separate listener that serves GET /metrics without a token (keep it on a private interface), e.g. 127.0.0.1:9464.' },
  // Collection
  { flag: 'trusted-proxy-hops', env: [envName('TRUSTED_PROXY_HOPS')], type: 'int', default: 0, min: 0, max: 10, description: 'Reverse proxies in front of Plumb whose X-Forwarded-For is believed (0: use the socket address).' },
  { flag: 'geoip-db', env: [envName('GEOIP_DB')], type: 'string', default: undefined, description: `MaxMind-format .mmdb for the visitor's country (and region, when it is a city database). Unset: the bundled database, country only: ${BUNDLED_GEO_DATABASE.attribution}.` },
  { flag: 'ingest-rate-per-second', env: [envName('INGEST_RATE_PER_SECOND')], type: 'int', default: 20, min: 1, max: 1000000, description: 'Per-IP steady rate on the ingest routes (tracker and server ingest).' },
  { flag: 'ingest-burst', env: [envName('INGEST_BURST')], type: 'int', default: 200, min: 1, max: 10000000, description: 'Per-IP burst on the ingest routes: a client’s bucket holds one second of the steady rate plus this many, and refills at the steady rate.' },
  { flag: 'api-rate-per-second', env: [envName('API_RATE_PER_SECOND')], type: 'int', default: 20, min: 1, max: 1000000, description: 'Per-IP steady rate on /api routes.' },
  { flag: 'api-burst', env: [envName('API_BURST')], type: 'int', default: 100, min: 1, max: 10000000, description: 'Per-IP burst on /api routes: a client’s bucket holds one second of the steady rate plus this many, and refills at the steady rate.' },
  { flag: 'login-rate-per-minute', env: [envName('LOGIN_RATE_PER_MINUTE')], type: 'int', default: 10, min: 1, max: 100000, description: 'Per-IP sign-in and MFA attempts per minute (login, TOTP, recovery codes, passkeys, invitations).' },
  { flag: 'login-burst', env: [envName('LOGIN_BURST')], type: 'int', default: 10, min: 1, max: 100000, description: 'Per-IP burst of sign-in attempts: a client’s bucket holds a minute’s attempts plus this many, and refills at the per-minute rate.' },
  { flag: 'ingest-batch-size', env: [envName('INGEST_BATCH_SIZE')], type: 'int', default: 10000, min: 1, max: 1000000, description: 'Journaled records (pageviews, events) per batch inserted into the analytics store (bigger inserts cost the store far less per row; rows are encoded when accepted, and the writer derives a batch’s visits on a worker thread of its own).' },
  { flag: 'ingest-flush-ms', env: [envName('INGEST_FLUSH_MS')], type: 'int', default: 1000, min: 10, max: 60000, description: 'Longest time an accepted event waits in the journal before it is inserted.' },
  { flag: 'ingest-buffer-mb', env: [envName('INGEST_BUFFER_MB')], type: 'int', default: 256, min: 1, max: 65536, description: 'Capacity of the durable ingest buffer (disk journal; JetStream stream in a cluster); when full, ingest answers 503 with Retry-After.' },
  { flag: 'ingest-sync', env: [envName('INGEST_SYNC')], type: 'enum', default: 'fsync', values: ['fsync', 'write'], description: 'Single node: when an accepted event is acknowledged. fsync: once the journal is fsync\'d (survives a power loss). write: once the journal write reached the kernel (survives a killed process, not a power loss; the journal is fsync\'d every second). A cluster acknowledges once JetStream has the event.' },
  { flag: 'session-timeout-minutes', env: [envName('SESSION_TIMEOUT_MINUTES')], type: 'int', default: 30, min: 1, max: 1440, description: 'Inactivity after which a visitor starts a new visit.' },
  // Stores and cluster
  { flag: 'database-url', env: [envName('DATABASE_URL')], type: 'url', default: undefined, schemes: ['postgres:', 'postgresql:'], secret: true, description: 'PostgreSQL URL for metadata. Unset: embedded PGlite in <data-dir>/meta.' },
  { flag: 'clickhouse-url', env: [envName('CLICKHOUSE_URL')], type: 'url', default: undefined, schemes: ['http:', 'https:'], secret: true, description: 'ClickHouse HTTP URL for analytics. Unset: embedded chDB in <data-dir>/analytics.' },
  { flag: 'query-memory-mb', env: [envName('QUERY_MEMORY_MB')], type: 'int', default: 512, min: 16, max: 1048576, description: 'Memory one analytics read (a dashboard panel, an API query, an export) may use. Sorts and aggregations past a quarter of it go on on disk; a read that needs more is answered 503 with Retry-After instead of taking memory from the rest of the node.' },
  { flag: 'heap-mb', env: [envName('HEAP_MB')], type: 'int', default: 256, min: 0, max: 1048576, description: 'Ceiling of the JavaScript heap (V8\'s old space; young semi-spaces of 8 MiB beside it), set by `plumb serve` re-executing itself once at start. 0: V8\'s own choice (a quarter of the machine\'s memory), which collects garbage far later. Heap flags given in NODE_OPTIONS or on node\'s command line win. The same restart exposes `gc()` (exports collect between slices, and a quiet node gives its heap back) and sets `MALLOC_ARENA_MAX=1` (one glibc malloc arena), `MALLOC_TRIM_THRESHOLD_=131072` and `MALLOC_MMAP_THRESHOLD_=131072` (glibc\'s thresholds kept at their starting values, so its heap gives freed memory back; not when either or `GLIBC_TUNABLES` is set), `JE_MALLOC_CONF=percpu_arena:disabled,narenas:1` (one arena of the analytics engine\'s allocator) and `NODE_COMPILE_CACHE=<install>/node_modules/.cache/plumb-compile` (Node\'s cache of the stripped TypeScript) unless they are already set; `NODE_DISABLE_COMPILE_CACHE=1` turns the cache off.' },
  { flag: 'redis-url', env: [envName('REDIS_URL')], type: 'url', default: undefined, schemes: ['redis:', 'rediss:'], secret: true, description: 'Redis URL for leader election. Unset: this node is always leader.' },
  { flag: 'transporter', env: [envName('TRANSPORTER')], type: 'url', default: undefined, schemes: ['nats:'], secret: true, description: 'Moleculer transporter (nats://host:4222). Unset: single node, no transporter.' },
  { flag: 'leader-lease-ms', env: [envName('LEADER_LEASE_MS')], type: 'int', default: 10000, min: 1000, max: 300000, description: 'Leader lease TTL in Redis; renewed every third of it.' },
  { flag: 'jetstream-url', env: [envName('JETSTREAM_URL')], type: 'url', default: undefined, schemes: ['nats:'], secret: true, description: 'Cluster: NATS server (JetStream enabled) holding the durable ingest stream. Unset: the transporter\'s server.' },
  { flag: 'forward-timeout-ms', env: [envName('FORWARD_TIMEOUT_MS')], type: 'int', default: 2000, min: 100, max: 60000, description: 'Cluster: how long a follower waits for the leader to take forwarded server ingest before it re-reads the leader, then buffers in JetStream.' },
  { flag: 'jetstream-replicas', env: [envName('JETSTREAM_REPLICAS')], type: 'int', default: 1, min: 1, max: 5, description: 'Cluster: copies of the ingest stream kept by a NATS cluster (set when the stream is created). 3 survives the loss of a NATS server.' },
  // Auth
  { flag: 'jwt-secret', env: [envName('JWT_SECRET')], type: 'string', default: undefined, secret: true, description: 'HMAC-SHA256 key for session tokens (32+ bytes). Unset: generated once and kept in <data-dir>/jwt-secret.' },
  { flag: 'auth-session-minutes', env: [envName('AUTH_SESSION_MINUTES')], type: 'int', default: 15, min: 1, max: 10080, description: 'Session lifetime in minutes.' },
  { flag: 'auth-session-warning-seconds', env: [envName('AUTH_SESSION_WARNING_SECONDS')], type: 'int', default: 60, min: 0, max: 86400, description: 'How long before expiry the dashboard warns.' },
  { flag: 'auth-remember-me-days', env: [envName('AUTH_REMEMBER_ME_DAYS')], type: 'int', default: 30, min: 1, max: 365, description: 'Remember-me lifetime in days.' },
  // Mail
  { flag: 'smtp-url', env: [envName('SMTP_URL')], type: 'url', default: undefined, schemes: ['smtp:', 'smtps:'], secret: true, description: 'SMTP server as a URL: smtp://user:password@host:587 (STARTTLS when offered) or smtps://…:465 (TLS from the start). Instead of the -smtp-host settings. Unset (and no -smtp-host): no mail is sent.' },
  { flag: 'smtp-host', env: [envName('SMTP_HOST')], type: 'string', default: undefined, description: 'SMTP server host name, when not given as -smtp-url.' },
  { flag: 'smtp-port', env: [envName('SMTP_PORT')], type: 'int', default: 0, min: 0, max: 65535, description: 'SMTP server port; 0: by -smtp-tls, 465 for tls, 587 for starttls, 25 for none.' },
  { flag: 'smtp-user', env: [envName('SMTP_USER')], type: 'string', default: undefined, description: 'SMTP user name (unset: no authentication).' },
  { flag: 'smtp-password', env: [envName('SMTP_PASSWORD')], type: 'string', default: undefined, secret: true, description: 'SMTP password.' },
  { flag: 'smtp-tls', env: [envName('SMTP_TLS')], type: 'enum', default: 'starttls', values: ['starttls', 'tls', 'none'], description: 'With -smtp-host: starttls (upgrade required), tls (TLS from the start) or none (plain text; a local relay only).' },
  { flag: 'mail-from', env: [envName('MAIL_FROM')], type: 'string', default: undefined, description: 'Sender of every message, e.g. "Plumb <plumb@example.org>". Required when an SMTP server is set.' },
  { flag: 'mail-max-attempts', env: [envName('MAIL_MAX_ATTEMPTS')], type: 'int', default: 8, min: 1, max: 50, description: 'Attempts per message, the first included, before it is marked failed.' },
  { flag: 'mail-retry-base-seconds', env: [envName('MAIL_RETRY_BASE_SECONDS')], type: 'int', default: 30, min: 1, max: 86400, description: 'Delay before a message\'s first retry; each later retry waits twice as long (up to 20% less, jitter).' },
  { flag: 'mail-retry-max-seconds', env: [envName('MAIL_RETRY_MAX_SECONDS')], type: 'int', default: 3600, min: 1, max: 604800, description: 'Longest delay between two attempts of a message.' },
  { flag: 'mail-sweep-seconds', env: [envName('MAIL_SWEEP_SECONDS')], type: 'int', default: 30, min: 1, max: 3600, description: 'How often the leader looks for due and stalled messages (it is also woken when one is queued).' },
  { flag: 'mail-timeout-seconds', env: [envName('MAIL_TIMEOUT_SECONDS')], type: 'int', default: 30, min: 1, max: 600, description: 'Longest one SMTP conversation may take, connection to the server\'s answer.' },
  // Imports
  { flag: 'import-max-file-bytes', env: [envName('IMPORT_MAX_FILE_BYTES')], type: 'int', default: 1073741824, min: 1024, max: 68719476736, description: 'Largest file an import accepts (its declared size; a zip\'s entries are limited separately, to 4 GiB each and 8 GiB together).' },
  // Favicons
  { flag: 'favicon-upstream', env: [envName('FAVICON_UPSTREAM')], type: 'url', default: 'https://icons.duckduckgo.com/ip3/', schemes: ['http:', 'https:'], description: 'The one favicon host the server asks; `<domain>.ico` is appended to the URL path.' },
  { flag: 'favicon-allow-private-upstream', env: [envName('FAVICON_ALLOW_PRIVATE_UPSTREAM')], type: 'bool', default: false, description: 'Let the favicon upstream be a loopback/private address (tests and development only).' },
  // Sign-in with other providers (README: Sign-in with other providers)
  { flag: 'oidc-google-issuer', env: [envName('OIDC_GOOGLE_ISSUER')], type: 'url', default: 'https://accounts.google.com', schemes: ['http:', 'https:'], description: 'Issuer of the general OpenID Connect sign-in provider ("Google"); its discovery document is read from <issuer>/.well-known/openid-configuration.' },
  { flag: 'oidc-google-client-id', env: [envName('OIDC_GOOGLE_CLIENT_ID')], type: 'string', default: undefined, description: 'Client id registered at the general OpenID Connect provider. With the secret set, its button appears on the login page.' },
  { flag: 'oidc-google-client-secret', env: [envName('OIDC_GOOGLE_CLIENT_SECRET')], type: 'string', default: undefined, secret: true, description: 'Client secret of the general OpenID Connect provider.' },
  { flag: 'oidc-entra-issuer', env: [envName('OIDC_ENTRA_ISSUER')], type: 'url', default: undefined, schemes: ['http:', 'https:'], description: 'Issuer of the enterprise-directory OpenID Connect provider ("Microsoft Entra ID"), e.g. https://login.microsoftonline.com/<tenant id>/v2.0. Identities are keyed by its tid and oid claims.' },
  { flag: 'oidc-entra-client-id', env: [envName('OIDC_ENTRA_CLIENT_ID')], type: 'string', default: undefined, description: 'Client (application) id registered in the directory. With the issuer and secret set, its button appears on the login page.' },
  { flag: 'oidc-entra-client-secret', env: [envName('OIDC_ENTRA_CLIENT_SECRET')], type: 'string', default: undefined, secret: true, description: 'Client secret of the directory application.' },
  { flag: 'github-client-id', env: [envName('GITHUB_CLIENT_ID')], type: 'string', default: undefined, description: 'Client id of a GitHub OAuth app. With the secret set, its button appears on the login page.' },
  { flag: 'github-client-secret', env: [envName('GITHUB_CLIENT_SECRET')], type: 'string', default: undefined, secret: true, description: 'Client secret of the GitHub OAuth app.' },
  { flag: 'github-oauth-url', env: [envName('GITHUB_OAUTH_URL')], type: 'url', default: 'https://github.com', schemes: ['http:', 'https:'], description: "Base URL of GitHub's OAuth endpoints (/login/oauth/authorize, /login/oauth/access_token); GitHub Enterprise Server uses its own host." },
  { flag: 'github-api-url', env: [envName('GITHUB_API_URL')], type: 'url', default: 'https://api.github.com', schemes: ['http:', 'https:'], description: "Base URL of GitHub's REST API (/user, /user/emails); GitHub Enterprise Server uses https://<host>/api/v3." },
  { flag: 'sso-allow-private', env: [envName('SSO_ALLOW_PRIVATE')], type: 'bool', default: false, description: 'Allow sign-in providers (social and team single sign-on) on loopback or private addresses and over plain http. For internal providers of a self-hosted instance; it removes the outbound address protection for provider requests.' },
  // Webhooks
  { flag: 'webhook-delivery-concurrency', env: [envName('WEBHOOK_DELIVERY_CONCURRENCY')], type: 'int', default: 8, min: 1, max: 256, description: 'Webhook deliveries in flight at once (on the leader).' },
  { flag: 'webhook-per-endpoint-concurrency', env: [envName('WEBHOOK_PER_ENDPOINT_CONCURRENCY')], type: 'int', default: 1, min: 1, max: 64, description: 'Deliveries in flight at once to one webhook.' },
  { flag: 'webhook-delivery-timeout', env: [envName('WEBHOOK_DELIVERY_TIMEOUT')], type: 'int', default: 10, min: 1, max: 300, description: 'Seconds one delivery attempt may take, DNS to last response byte.' },
  { flag: 'webhook-max-attempts', env: [envName('WEBHOOK_MAX_ATTEMPTS')], type: 'int', default: 6, min: 1, max: 50, description: 'Attempts per delivery, the first included, before it is marked failed.' },
  { flag: 'webhook-retry-base-seconds', env: [envName('WEBHOOK_RETRY_BASE_SECONDS')], type: 'int', default: 30, min: 1, max: 86400, description: 'Delay before the first retry; each later retry waits twice as long (up to 20% less, jitter).' },
  { flag: 'webhook-retry-max-seconds', env: [envName('WEBHOOK_RETRY_MAX_SECONDS')], type: 'int', default: 21600, min: 1, max: 604800, description: 'Longest delay between two attempts.' },
  { flag: 'webhook-sweep-seconds', env: [envName('WEBHOOK_SWEEP_SECONDS')], type: 'int', default: 30, min: 1, max: 3600, description: 'How often the recovery sweep re-queues due and stalled deliveries.' },
  { flag: 'webhook-retention-days', env: [envName('WEBHOOK_RETENTION_DAYS')], type: 'int', default: 30, min: 1, max: 3650, description: 'Days delivery history (and its events) is kept.' },
  { flag: 'webhook-allow-development-targets', env: [envName('WEBHOOK_ALLOW_DEVELOPMENT_TARGETS')], type: 'bool', default: false, description: 'Allow http:// and loopback/private webhook destinations. Development only: it removes the SSRF protection.' },
] as const satisfies readonly SettingSpec[];

type Spec = (typeof SETTINGS)[number];
type CamelCase<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;
type ValueOf<S extends Spec> = S['type'] extends 'int'
  ? number
  : S['type'] extends 'bool'
    ? boolean
    : S['type'] extends 'list'
      ? string[]
      : S['default'] extends undefined
        ? string | undefined
        : string;

export type Config = { [S in Spec as CamelCase<S['flag']>]: ValueOf<S> } & {
  /** Absolute data dir. */
  dataDir: string;
  /** Always set after loading: the default is derived from the port. */
  publicUrl: string;
  nodeId: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** True when a transporter is set: several nodes share external stores. */
  clusterMode: boolean;
  /** Flags that are not Plumb's own (`-<plugin>-<key>`), left for the plugins' settings to claim at start. */
  pluginFlags: ReadonlyMap<string, string>;
};

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const bySpecFlag = new Map<string, SettingSpec>(SETTINGS.map((s) => [s.flag, s as SettingSpec]));

export interface ParsedArgs {
  command: string | undefined;
  flags: Map<string, string>;
  /** Flags that name no setting of Plumb's own (kept only with `allowUnknown`). */
  unknown: Map<string, string>;
  help: boolean;
}

/**
 * Splits argv into a command and Go-style flags. Unknown flags are refused by name, unless
 * `allowUnknown` keeps them for plugins' settings (`-<plugin>-<key> value` or `=value`).
 */
export function parseArgs(argv: readonly string[], options: { allowUnknown?: boolean } = {}): ParsedArgs {
  const flags = new Map<string, string>();
  const unknown = new Map<string, string>();
  let command: string | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('-') || arg === '-' || arg === '--') {
      if (command === undefined && !arg.startsWith('-')) command = arg;
      else throw new ConfigError(arg, 'unexpected argument');
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq === -1 ? body : body.slice(0, eq);
    if (name === 'help' || name === 'h') {
      help = true;
      continue;
    }
    const spec = bySpecFlag.get(name);
    if (!spec && options.allowUnknown && /^[a-z][a-z0-9-]*-[a-z0-9-]+$/.test(name)) {
      const next = argv[i + 1];
      if (eq !== -1) unknown.set(name, body.slice(eq + 1));
      else if (next !== undefined && !next.startsWith('-')) unknown.set(name, argv[++i]);
      else unknown.set(name, 'true');
      continue;
    }
    if (!spec) throw new ConfigError(`-${name}`, 'unknown flag (see plumb --help)');
    if (eq !== -1) {
      flags.set(name, body.slice(eq + 1));
    } else if (spec.type === 'bool' && (argv[i + 1] === undefined || argv[i + 1].startsWith('-'))) {
      flags.set(name, 'true');
    } else {
      const value = argv[i + 1];
      if (value === undefined) throw new ConfigError(`-${name}`, 'needs a value');
      flags.set(name, value);
      i++;
    }
  }
  return { command, flags, unknown, help };
}

/** A raw flag or env value as its setting declares it (Plumb's own and plugins' alike); `source` names it in the error. */
export function coerceSetting(
  spec: Pick<SettingSpec, 'type' | 'min' | 'max' | 'values' | 'schemes' | 'secret'>,
  raw: string,
  source: string,
): string | number | boolean | string[] {
  const fail = (why: string): never => {
    throw new ConfigError(source, `${why} (got ${spec.secret ? 'a hidden value' : JSON.stringify(raw)})`);
  };
  switch (spec.type) {
    case 'int': {
      if (!/^-?\d+$/.test(raw.trim())) fail('must be an integer');
      const n = Number(raw);
      if (spec.min !== undefined && n < spec.min) fail(`must be at least ${spec.min}`);
      if (spec.max !== undefined && n > spec.max) fail(`must be at most ${spec.max}`);
      return n;
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(v)) return true;
      if (['false', '0', 'no', 'off'].includes(v)) return false;
      return fail('must be true or false');
    }
    case 'enum':
      if (!spec.values!.includes(raw)) fail(`must be one of ${spec.values!.join(', ')}`);
      return raw;
    case 'url': {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return fail('must be an absolute URL');
      }
      if (spec.schemes && !spec.schemes.includes(url.protocol)) fail(`must use ${spec.schemes.join(' or ')}`);
      return raw;
    }
    case 'list':
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      if (raw === '') fail('must not be empty');
      return raw;
  }
}

export interface LoadOptions {
  argv?: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Builds the typed config from flags, env and defaults; throws ConfigError naming the bad setting. */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const { flags, unknown } = parseArgs(options.argv ?? [], { allowUnknown: true });
  const values: Record<string, unknown> = {};
  for (const spec of SETTINGS as readonly SettingSpec[]) {
    const key = camel(spec.flag);
    const flagValue = flags.get(spec.flag);
    const envName = spec.env.find((name) => env[name] !== undefined && env[name] !== '');
    if (flagValue !== undefined) values[key] = coerceSetting(spec, flagValue, `-${spec.flag}`);
    else if (envName) values[key] = coerceSetting(spec, env[envName]!, envName);
    else values[key] = spec.default;
  }
  const cwd = options.cwd ?? process.cwd();
  const dataDir = String(values.dataDir);
  values.dataDir = dataDir.startsWith('/') ? dataDir : `${cwd.replace(/\/$/, '')}/${dataDir.replace(/^\.\//, '')}`;
  values.publicUrl = String(values.publicUrl ?? `http://localhost:${values.port === 0 ? 8080 : values.port}`).replace(/\/+$/, '');
  values.nodeId ??= `${hostname()}-${process.pid}`;
  values.clusterMode = values.transporter !== undefined;
  // Without plugins, a flag that is not Plumb's own is a typo, refused now; with plugins, those
  // whose settings it names claim it at start and the rest are refused then.
  const [stray] = unknown.keys();
  if (stray !== undefined && (values.plugins as string[]).length === 0) throw new ConfigError(`-${stray}`, 'unknown flag (see plumb --help)');
  values.pluginFlags = unknown;
  if (values.clusterMode && (!values.databaseUrl || !values.clickhouseUrl)) {
    throw new ConfigError(
      envName('TRANSPORTER'),
      `cluster mode needs ${envName('DATABASE_URL')} and ${envName('CLICKHOUSE_URL')}: the embedded stores (PGlite, chDB) belong to one process and cannot be shared by several nodes`,
    );
  }
  if (values.metricsAddress !== undefined) values.metricsAddress = checkListenAddress(String(values.metricsAddress), envName('METRICS_ADDRESS'));
  checkMail(values);
  if (values.clusterMode && !values.jwtSecret) {
    throw new ConfigError(envName('JWT_SECRET'), 'cluster mode needs one secret shared by all nodes; a generated one would differ per node and sessions would not cross them');
  }
  return values as Config;
}

/** One way to name the SMTP server, and a sender whenever there is one. */
function checkMail(values: Record<string, unknown>) {
  if (values.smtpUrl !== undefined && values.smtpHost !== undefined) {
    throw new ConfigError(envName('SMTP_URL'), `set either ${envName('SMTP_URL')} or ${envName('SMTP_HOST')}, not both`);
  }
  if ((values.smtpUrl !== undefined || values.smtpHost !== undefined) && values.mailFrom === undefined) {
    throw new ConfigError(envName('MAIL_FROM'), 'is required when an SMTP server is set: every message needs a sender');
  }
  if (values.mailFrom !== undefined && !/^[^\r\n]*<?[^\s@<>]+@[^\s@<>]+>?$/.test(String(values.mailFrom))) {
    throw new ConfigError(envName('MAIL_FROM'), `must be an address or "Name <address>", got "${String(values.mailFrom)}"`);
  }
}

/** `host:port` (an IPv6 host in brackets); the port 1–65535. */
function checkListenAddress(value: string, setting: string): string {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : 0;
  if (!match || port < 1 || port > 65535) throw new ConfigError(setting, `must be host:port (e.g. 127.0.0.1:9464), got "${value}"`);
  return value;
}

/** The config with secrets masked, for the debug log line at start. */
export function describeConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const spec of SETTINGS as readonly SettingSpec[]) {
    const key = camel(spec.flag);
    if (spec.secret && out[key] !== undefined) out[key] = maskSecret(spec, String(out[key]));
  }
  return out;
}

/** Every setting in declaration order: its flag, its first env name, and its value now (secrets masked, null when unset). */
export function activeSettings(config: Config): { flag: string; env: string; value: string | number | boolean | string[] | null }[] {
  const masked = describeConfig(config);
  return (SETTINGS as readonly SettingSpec[]).map((spec) => ({
    flag: `-${spec.flag}`,
    env: spec.env[0],
    value: (masked[camel(spec.flag)] as string | number | boolean | string[] | undefined) ?? null,
  }));
}

function maskSecret(spec: SettingSpec, value: string): string {
  if (spec.type !== 'url') return '********';
  const url = new URL(value);
  if (url.password) url.password = '****';
  return url.toString();
}

/** `plumb --help`: every setting with its flag, env names and default. */
export function helpText(): string {
  const lines = [
    'Usage: plumb <command> [flags]',
    '',
    'Commands:',
    '  serve     run the Plumb node (HTTP gateway, ingest, dashboard)',
    '  forward-ai-fetches  send AI crawlers\' requests from web-server logs to a Plumb instance (its own --help)',
    '  restore   --from <dir | s3://bucket/prefix> [--backup <id>]: bring an archives backup back into empty stores',
    '            (the data dir\'s, or the PostgreSQL and ClickHouse the settings name); the newest backup unless --backup',
    '',
    'Settings (flag, then env, then default; flags accept -name value, -name=value, --name value, --name=value):',
  ];
  for (const spec of SETTINGS as readonly SettingSpec[]) {
    const def = spec.default === undefined || (Array.isArray(spec.default) && spec.default.length === 0) ? '(unset)' : String(spec.default);
    lines.push(`  -${spec.flag} <${spec.type}>`, `      env ${spec.env.join(', ')}; default ${def}`, `      ${spec.description}`);
  }
  return `${lines.join('\n')}\n`;
}
