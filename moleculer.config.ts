// Broker options for a Plumb node: transporter (cluster) or none, pino logger, fastest-validator,
// explicit namespace/nodeID, request timeout and context tracking so shutdown drains in-flight calls.
import type { BrokerOptions, Middleware } from 'moleculer';
import type { Config } from './lib/config.ts';
import { logDestination } from './lib/log.ts';

export function brokerOptions(config: Config, middlewares: Middleware[] = []): BrokerOptions {
  return {
    namespace: config.namespace,
    nodeID: config.nodeId,
    // A transporter URL string (nats://…) is resolved by Moleculer at start.
    transporter: (config.transporter ?? null) as BrokerOptions['transporter'],
    logger: config.logLevel === 'silent' ? false : { type: 'Pino', options: { level: config.logLevel, pino: { options: { base: { pid: process.pid, node: config.nodeId } }, destination: logDestination() } } },
    requestTimeout: config.requestTimeoutMs,
    disableBalancer: false,
    validator: true,
    middlewares,
    tracking: { enabled: true, shutdownTimeout: config.shutdownTimeoutMs },
    registry: { strategy: 'RoundRobin', preferLocal: true },
    heartbeatInterval: 5,
    heartbeatTimeout: 15,
    // Moleculer's own banner and metrics would print on every start; Plumb logs its own line.
    metrics: false,
    tracing: false,
    skipProcessEventRegistration: true,
  };
}
