// Logging: pino JSON lines on stdout; human-readable only when stdout is a terminal. Everything
// outside Moleculer (stores, CLI, elector) logs through a Log so tests can pass a silent one.
import { createRequire } from 'node:module';
import pino from 'pino';
import type { Config } from './config.ts';

export interface Log {
  trace(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

/** A Log whose every line carries these fields (a plugin's lines carry its name). */
export function withFields(log: Log, fields: Record<string, unknown>): Log {
  const line =
    (level: keyof Log) =>
    (obj: object | string, msg?: string): void =>
      typeof obj === 'string' ? log[level](fields, obj) : log[level]({ ...fields, ...obj }, msg);
  return { trace: line('trace'), debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

type PrettyPrinter = (options: Record<string, unknown>) => pino.DestinationStream;

/**
 * pino-pretty, or null when it is not installed. It is an optional dependency: a server whose
 * logs go to a collector never needs it, so it is loaded only for a terminal, and only then.
 */
function loadPrettyPrinter(): PrettyPrinter | null {
  try {
    return createRequire(import.meta.url)('pino-pretty') as PrettyPrinter;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return null;
    throw err;
  }
}

/** Where log lines go: a pretty printer on a TTY when one is installed, else plain stdout (collectors parse JSON). */
function logDestination(): pino.DestinationStream | undefined {
  if (!process.stdout.isTTY) return undefined;
  return loadPrettyPrinter()?.({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

export function createLog(level: Config['logLevel'], name = 'plumb'): pino.Logger {
  const destination = logDestination();
  const options = { name, level, base: { pid: process.pid } };
  return destination ? pino(options, destination) : pino(options);
}

export const silentLog: Log = pino({ level: 'silent' });

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Moleculer's logger options, writing through Plumb's log. Moleculer's `info` lines (its banner,
 * every service registered and started, the gateway's own listening line) go out at `debug`: at
 * `info` the start-up reads as what Plumb itself did. Warnings and errors keep their level.
 * The gateway (module API) logs through Plumb's log itself, once per failed request: moleculer-web's
 * own lines (an error line for every 5xx, 503 included; a warning whenever a browser closes an
 * event stream) are left at `fatal`, through Moleculer's per-module log levels.
 */
export function moleculerLogger(root: pino.Logger, level: Exclude<Config['logLevel'], 'silent'>) {
  const createLogger = (moduleLevel: Level, bindings: Record<string, unknown>) => {
    const child = root.child(bindings, { level: moduleLevel });
    const write = (to: Level) => (...args: unknown[]) => (child[to] as (...a: unknown[]) => void)(...args);
    return { fatal: write('fatal'), error: write('error'), warn: write('warn'), info: write('debug'), debug: write('debug'), trace: write('trace') };
  };
  return { type: 'Pino', options: { level: { API: 'fatal', '**': level }, createLogger } };
}
