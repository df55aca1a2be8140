// Broker options for a Plumb node: transporter (cluster) or none, pino logger, fastest-validator,
// explicit namespace/nodeID, request timeout and context tracking so shutdown drains in-flight calls.
import { randomBytes } from 'node:crypto';
import type { BrokerOptions, Middleware, ServiceBroker } from 'moleculer';
import type { Config } from './lib/config.ts';
import { createLog, moleculerLogger } from './lib/log.ts';
import { createValidator } from './lib/validation.ts';

/**
 * Moleculer's own validator middleware runs before any user middleware. Plumb validates params
 * itself, registered first so it wraps innermost: access control (registered after it) runs
 * before validation, and a stranger learns nothing about a route's fields.
 */
function validation(broker: ServiceBroker): Middleware {
  const validator = createValidator();
  validator.init(broker);
  return validator.middleware(broker) as Middleware;
}

/**
 * Ids for Moleculer's contexts (and the few other ids it makes): unique in the cluster, as its
 * transit keys requests and streams by them, from a random prefix per broker and a count. Moleculer's
 * own are random UUIDs built from 20 string joins, made for every action call: one per ingest request.
 */
export function contextIds(): () => string {
  const prefix = `${randomBytes(9).toString('base64url')}-`;
  let count = 0;
  return () => prefix + (++count).toString(36);
}

/** `log` is the node's own log (lib/log.ts), which Moleculer's lines join. */
export function brokerOptions(config: Config, middlewares: Middleware[] = [], log = createLog(config.logLevel)): BrokerOptions {
  return {
    namespace: config.namespace,
    nodeID: config.nodeId,
    uidGenerator: contextIds(),
    // A transporter URL string (nats://…) is resolved by Moleculer at start.
    transporter: (config.transporter ?? null) as BrokerOptions['transporter'],
    logger: config.logLevel === 'silent' ? false : (moleculerLogger(log, config.logLevel) as BrokerOptions['logger']),
    requestTimeout: config.requestTimeoutMs,
    disableBalancer: false,
    validator: false,
    middlewares: [validation as unknown as Middleware, ...middlewares],
    tracking: { enabled: true, shutdownTimeout: config.shutdownTimeoutMs },
    registry: { strategy: 'RoundRobin', preferLocal: true },
    heartbeatInterval: 5,
    heartbeatTimeout: 15,
    // Metrics and tracing would print and collect on every start; Plumb logs its own lines.
    metrics: false,
    tracing: false,
    skipProcessEventRegistration: true,
  };
}
