// Broker options for a Plumb node: transporter (cluster) or none, pino logger, fastest-validator,
// explicit namespace/nodeID, request timeout and context tracking so shutdown drains in-flight calls.
import { type BrokerOptions, type Middleware, type ServiceBroker, Validators } from 'moleculer';
import type { Config } from './lib/config.ts';
import { logDestination } from './lib/log.ts';

/**
 * Moleculer's own validator middleware runs before any user middleware. Plumb validates params
 * itself, registered first so it wraps innermost: access control (registered after it) runs
 * before validation, and a stranger learns nothing about a route's fields.
 */
function validation(broker: ServiceBroker): Middleware {
  const validator = new Validators.Fastest({});
  validator.init(broker);
  return validator.middleware(broker) as Middleware;
}

export function brokerOptions(config: Config, middlewares: Middleware[] = []): BrokerOptions {
  return {
    namespace: config.namespace,
    nodeID: config.nodeId,
    // A transporter URL string (nats://…) is resolved by Moleculer at start.
    transporter: (config.transporter ?? null) as BrokerOptions['transporter'],
    logger: config.logLevel === 'silent' ? false : { type: 'Pino', options: { level: config.logLevel, pino: { options: { base: { pid: process.pid, node: config.nodeId } }, destination: logDestination() } } },
    requestTimeout: config.requestTimeoutMs,
    disableBalancer: false,
    validator: false,
    middlewares: [validation as unknown as Middleware, ...middlewares],
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
