// Logging: pino, JSON lines; pretty-ish only when stdout is a TTY. Everything outside Moleculer
// (stores, CLI, elector) logs through a Log so tests can pass a silent one.
import pino from 'pino';
import type { Config } from './config.ts';

export interface Log {
  trace(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

export function createLog(level: Config['logLevel'], name = 'plumb'): pino.Logger {
  return pino({ name, level, base: { pid: process.pid } });
}

export const silentLog: Log = pino({ level: 'silent' });
