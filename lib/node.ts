// Composes and starts one Plumb node: the services and every leader job are put together here,
// and nowhere else. Start: broker and gateway first (so /healthz answers at once), then the stores
// and the "stores ready" hooks (then /readyz turns 200), then leadership, which starts the leader
// jobs. Stopping runs the same steps backwards. docs/architecture.md (Lifecycle) has the whole order.
import { CORE_SCOPES } from './auth/roles.ts';
import type { Server } from 'node:http';
import { ServiceBroker } from 'moleculer';
import { createLocalElector } from '../cluster/election/local.ts';
import { createLeaderFence, currentLeaderEpoch } from '../cluster/fencing.ts';
import { clusterSink } from '../cluster/ingest-sink.ts';
import { createLeaderJobSlot, createLeaderJobs } from '../cluster/leader-jobs.ts';
import { createClusterStatus } from '../cluster/status.ts';
import { brokerOptions } from '../moleculer.config.ts';
import { FIRST_PARTY_PLUGINS } from '../plugins/index.ts';
import { type FirstPartyPlugins, loadPlugins } from './plugins/loader.ts';
import { dashboardOf, registerPlugins, settlePluginSettings } from './plugins/register.ts';
import createPluginsService from '../services/plugins.service.ts';
import createSystemService from '../services/system.service.ts';
import { gatewayOf } from '../services/api.service.ts';
import { LEADER_JOB_FACTORIES, SERVICE_FACTORIES } from '../services/index.ts';
import { accessMiddleware } from './auth/access.ts';
import { BRAND, VERSION } from './brand.ts';
import { resolveJwtSecret } from './auth/jwt-secret.ts';
import { type Config, describeConfig } from './config.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { createRateLimits } from './http/rate-limit.ts';
import { type IngestSink, journalSink, type OpenIngestSink } from './ingest/sink.ts';
import { createLog } from './log.ts';
import { releasedFields, releaseMemoryWhenQuiet } from './memory-release.ts';
import { startMetricsListener } from './metrics/endpoint.ts';
import { createNodeMetrics } from './metrics/metrics.ts';
import { timedAnalytics, timedMetadata } from './metrics/stores.ts';
import { deliveryBacklog } from './webhooks/queue.ts';
import { mailBacklog } from './mail/queue.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import { type AnalyticsStore, openAnalyticsStore } from './stores/analytics/index.ts';
import { type MetadataStore, openMetadataStore } from './stores/metadata/index.ts';

export interface PlumbNode {
  runtime: Runtime;
  broker: ServiceBroker;
  /** Base URL the node listens on (actual port when 0 was asked for). */
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** The plugins -plugins may name by a bare name; the ones Plumb ships unless given. */
  firstPartyPlugins?: FirstPartyPlugins;
  /** Where plugin paths are relative to (default: the working directory). */
  cwd?: string;
}

export async function startNode(config: Config, options: StartOptions = {}): Promise<PlumbNode> {
  const started = performance.now();
  const log = createLog(config.logLevel);
  log.debug({ config: describeConfig(config) }, 'configuration');
  const plugins = await loadPlugins(config.plugins, { cwd: options.cwd ?? process.cwd(), firstParty: options.firstPartyPlugins ?? FIRST_PARTY_PLUGINS });
  const pluginSettings = settlePluginSettings(plugins, options.env ?? process.env, config.pluginFlags);
  const dataDirLock = lockDataDir(config.dataDir);
  const jwtSecret = resolveJwtSecret(config.jwtSecret, config.dataDir, log);
  // The Redis elector (and ioredis) is loaded only by a node of a cluster.
  const elector = config.redisUrl
    ? (await import('../cluster/election/redis.ts')).createRedisElector({
        redisUrl: config.redisUrl,
        nodeId: config.nodeId,
        leaseMs: config.leaderLeaseMs,
        key: `${config.namespace}:leader`,
        log,
        epochFloor: () => currentLeaderEpoch(runtime.metadata()),
      })
    : createLocalElector(config.nodeId);
  const leaderJobs = createLeaderJobs(elector, log);
  const webhookDispatch = createLeaderJobSlot(log);
  const mailDispatch = createLeaderJobSlot(log);
  const importRunner = createLeaderJobSlot(log);
  const streamDrain = createLeaderJobSlot(log);
  const rateLimits = createRateLimits(config, log);
  // The stores open after the services start; these read them through the runtime when used.
  const stores = { metadata: () => runtime.metadata(), analytics: () => runtime.analytics() };
  const whenStoresReady = (hook: () => Promise<void> | void) => runtime.whenStoresReady(hook);
  const fence = createLeaderFence(stores.metadata, config.nodeId, elector.kind === 'redis');
  const cluster = createClusterStatus(config, elector);
  const sink: OpenIngestSink = config.clusterMode
    ? clusterSink({ config, log, elector, drain: streamDrain, fence, status: cluster, ...stores })
    : journalSink(config, log, stores.analytics, whenStoresReady);
  let ingestSink: IngestSink | undefined;
  const openIngestSink: OpenIngestSink = async (context) => {
    const opened = await sink(context);
    cluster.attachSink(opened);
    ingestSink = opened;
    return opened;
  };
  const metrics = createNodeMetrics();
  metrics.attach({
    leadership: () => elector.state(),
    ingestDepth: async () => (ingestSink ? ingestSink.depth() : null),
    webhookQueue: () => deliveryBacklog(runtime.metadata()),
    mailQueue: () => mailBacklog(runtime.metadata()),
  });
  const apiScopes = [...CORE_SCOPES, ...plugins.flatMap(({ definition }) => definition.scopes ?? [])];
  const addedWebhookEvents = plugins.flatMap(({ definition }) => definition.webhookEvents ?? []);
  const runtime = createRuntime({ config, log, jwtSecret, elector, leaderJobs, webhookDispatch, mailDispatch, importRunner, fence, cluster, openIngestSink, rateLimits, apiScopes, addedWebhookEvents, metrics });

  const broker = new ServiceBroker(brokerOptions(config, [accessMiddleware(runtime.metadata)], log));
  for (const factory of SERVICE_FACTORIES) broker.createService(factory(runtime));
  for (const { name, create } of LEADER_JOB_FACTORIES) leaderJobs.register(name, create(runtime));
  if (config.clusterMode) leaderJobs.register('ingest.stream-drain', streamDrain.job);
  const running = registerPlugins(broker, runtime, leaderJobs, plugins, pluginSettings);
  broker.createService(createPluginsService(runtime, running, dashboardOf(plugins, running)));
  broker.createService(createSystemService(runtime, running));
  elector.onChange((state) => broker.broadcast('cluster.leader.changed', state));

  await broker.start();
  const gateway = gatewayOf(broker);
  gateway.refreshRoutes();
  const server = gateway.server;
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : config.port;

  let metadata: MetadataStore | undefined;
  let analytics: AnalyticsStore | undefined;
  let metricsServer: Server | undefined;
  try {
    // Up before the stores, so a scrape sees a node that is slow to start.
    if (config.metricsAddress) metricsServer = await startMetricsListener(config.metricsAddress, metrics, log);
    [metadata, analytics] = await Promise.all([
      openMetadataStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, log }),
      openAnalyticsStore({ dataDir: config.dataDir, clickhouseUrl: config.clickhouseUrl, readMemoryBytes: config.queryMemoryMb * 1024 * 1024, log }),
    ]);
    await runtime.storesOpened({ metadata: timedMetadata(metadata, metrics), analytics: timedAnalytics(analytics, metrics) });
    runtime.setReady(true);
    await elector.start();
  } catch (err) {
    await broker.stop().catch(() => undefined);
    await Promise.all([metadata?.close(), analytics?.close(), closeServer(metricsServer)]).catch(() => undefined);
    dataDirLock.release();
    throw err;
  }
  const role = elector.isLeader() ? 'leader' : 'follower';
  log.info(
    { version: VERSION, ms: Math.round(performance.now() - started), nodeId: config.nodeId, leader: elector.isLeader(), dataDir: config.dataDir },
    `${BRAND} ${VERSION} ready at ${config.publicUrl} (node ${config.nodeId}, ${role})`,
  );

  const heapRelease = releaseMemoryWhenQuiet((release) => log.debug(releasedFields(release), 'released the JavaScript heap the node no longer used'));

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      runtime.setStopping();
      heapRelease?.stop();
      // Past the drain budget, idle and stuck connections are cut so the process can exit in time.
      const deadline = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      deadline.unref();
      try {
        await leaderJobs.close();
        await elector.stop();
        await broker.stop();
      } finally {
        clearTimeout(deadline);
        runtime.detachStores();
        await Promise.all([metadata?.close(), analytics?.close(), rateLimits.close(), closeServer(metricsServer)]);
        dataDirLock.release();
        log.info('Plumb stopped');
      }
    })();
    return stopping;
  };

  return { runtime, broker, url: `http://127.0.0.1:${port}`, port, stop };
}

function closeServer(server: Server | undefined): Promise<void> {
  if (!server?.listening) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
