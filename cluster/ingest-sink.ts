// The cluster's durable ingest path, as the ingest service sees it (lib/ingest/sink.ts): tracker
// ingest appends to the JetStream stream on every node, server ingest goes to the leader
// (cluster/forwarding.ts), and whichever node leads drains the stream into the analytics store
// as a leader job, under its fencing epoch.
import type { Config } from '../lib/config.ts';
import type { IngestSink, OpenIngestSink } from '../lib/ingest/sink.ts';
import { createIngestWriter, type IngestWriter } from '../lib/ingest/writer.ts';
import type { Log } from '../lib/log.ts';
import type { AnalyticsStore } from '../lib/stores/analytics/index.ts';
import type { MetadataStore } from '../lib/stores/metadata/index.ts';
import type { LeaderElector } from './election/elector.ts';
import type { LeaderFence } from './fencing.ts';
import { createForwarder } from './forwarding.ts';
import type { LeaderJobSlot } from './leader-jobs.ts';
import type { ClusterStatus } from './status.ts';
import { createStreamJournal, type StreamJournal } from './stream-journal.ts';

export interface ClusterSinkOptions {
  config: Config;
  log: Log;
  elector: LeaderElector;
  /** The node's 'ingest.stream-drain' leader job: this sink plugs in the drain while it is open. */
  drain: LeaderJobSlot;
  fence: LeaderFence;
  metadata: () => MetadataStore;
  analytics: () => AnalyticsStore;
  status: ClusterStatus;
}

export function clusterSink(options: ClusterSinkOptions): OpenIngestSink {
  const { config, log } = options;
  return async ({ broker, onStored, visitTimeoutMs }): Promise<IngestSink> => {
    // Loaded here so a single node never loads the NATS client.
    const { openIngestStream } = await import('./ingest-stream.ts');
    const stream = await openIngestStream({
      url: config.jetstreamUrl ?? config.transporter!,
      namespace: config.namespace,
      maxBytes: config.ingestBufferMb * 1024 * 1024,
      replicas: config.jetstreamReplicas,
      log,
    });
    const forwarder = createForwarder({ broker, elector: options.elector, stream, nodeId: config.nodeId, timeoutMs: config.forwardTimeoutMs, log });
    options.status.attachForwarder(forwarder);

    let drain: { journal: StreamJournal; writer: IngestWriter } | undefined;
    const unplugDrain = options.drain.plug({
      start(epoch) {
        // Claim the fencing row at once, so a deposed leader is refused from the first moment.
        options.fence.run(epoch, async () => undefined).catch((err: Error) => log.warn({ err: err.message, epoch }, 'ingest stream: could not claim the leader epoch yet'));
        const journal = createStreamJournal({ stream, metadata: options.metadata, fence: options.fence, epoch, log, refreshMs: Math.min(config.ingestFlushMs, 500) });
        const writer = createIngestWriter({
          journal,
          analytics: options.analytics,
          log,
          batchSize: config.ingestBatchSize,
          flushMs: config.ingestFlushMs,
          onStored,
          visitIdleMs: visitTimeoutMs,
        });
        writer.start();
        drain = { journal, writer };
      },
      async stop() {
        const current = drain;
        drain = undefined;
        if (!current) return;
        // Finish only the batch in flight: the next leader takes over from the cursor.
        await current.writer.stop(0);
        await current.journal.close();
      },
    });

    return {
      local: { append: (records) => stream.publish(records) },
      leader: forwarder,
      async depth() {
        const { messages, bytes } = await stream.depth();
        return { pending: messages, bytes, unit: 'messages' };
      },
      async close() {
        options.status.detach();
        await unplugDrain();
        await stream.close();
      },
    };
  };
}
