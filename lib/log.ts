// Logging: pino JSON lines on stdout; human-readable only when stdout is a terminal. Everything
// outside Moleculer (stores, CLI, elector) logs through a Log so tests can pass a silent one.
import pino from 'pino';
import pinoPretty from 'pino-pretty';
import type { Config } from './config.ts';

export interface Log {
  trace(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

/** Where log lines go: a pretty printer on a TTY, plain stdout otherwise (collectors parse JSON). */
export function logDestination(): pino.DestinationStream | undefined {
  return process.stdout.isTTY ? pinoPretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) : undefined;
}

export function createLog(level: Config['logLevel'], name = 'plumb'): pino.Logger {
  const destination = logDestination();
  const options = { name, level, base: { pid: process.pid } };
  return destination ? pino(options, destination) : pino(options);
}

export const silentLog: Log = pino({ level: 'silent' });
