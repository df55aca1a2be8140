// The node's log on a terminal: human-readable through pino-pretty when it is installed, and still
// working, as JSON lines, when it is not (it is an optional dependency). Each case runs in a child
// process whose stdout claims to be a terminal; "not installed" is a resolve hook that refuses
// pino-pretty the way Node does for a missing package.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';

const logModule = new URL('../../lib/log.ts', import.meta.url).href;

function logOnTerminal(pinoPrettyInstalled: boolean): string {
  const script = `
    import { registerHooks } from 'node:module';
    if (${!pinoPrettyInstalled}) {
      registerHooks({
        resolve(specifier, context, next) {
          if (specifier === 'pino-pretty') throw Object.assign(new Error("Cannot find module 'pino-pretty'"), { code: 'MODULE_NOT_FOUND' });
          return next(specifier, context);
        },
      });
    }
    Object.defineProperty(process.stdout, 'isTTY', { value: true });
    const { createLog } = await import(${JSON.stringify(logModule)});
    createLog('info', 'plumb').info({ site: 'shop.example.com' }, 'node started');
  `;
  return execFileSync(process.execPath, ['--input-type=module', '--no-warnings', '-e', script], { encoding: 'utf8' });
}

describe('createLog on a terminal', () => {
  it('writes JSON lines when pino-pretty is not installed', () => {
    const lines = logOnTerminal(false).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 30, name: 'plumb', site: 'shop.example.com', msg: 'node started' });
  });

  it('writes human-readable lines when pino-pretty is installed', () => {
    const output = stripVTControlCharacters(logOnTerminal(true));
    expect(output).toContain('INFO');
    expect(output).toContain('(plumb): node started');
    expect(() => JSON.parse(output.trim())).toThrow();
  });
});
