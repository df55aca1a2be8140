// The preflight of `npm test`: with a service down it stops the run in seconds and says how to
// start it; with everything up it lets the run go on.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { freePort, NODE_BIN, ROOT } from '../support/instance.ts';

function preflight(env: Record<string, string>) {
  const started = performance.now();
  const run = spawnSync(NODE_BIN, [join(ROOT, 'test/support/preflight.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: run.status, stderr: run.stderr, ms: performance.now() - started };
}

describe('npm test preflight', () => {
  it('fails at once, naming the unreachable service and the command that starts it', async () => {
    const closed = await freePort();
    const result = preflight({ PLUMB_TEST_REDIS_URL: `redis://127.0.0.1:${closed}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Redis at 127.0.0.1:${closed}`);
    expect(result.stderr).toContain('start it: redis-server');
    expect(result.stderr).toContain('bash .ci/run');
    expect(result.stderr).not.toContain('PostgreSQL at');
    expect(result.ms).toBeLessThan(10_000);
  });

  it('names a missing Chromium with the package that provides it', () => {
    const result = preflight({ PLUMB_CHROMIUM: join(ROOT, 'no-such-chromium') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('apt-get install -y chromium');
  });

  it('passes when PostgreSQL, Redis, NATS and Chromium are all there', () => {
    const result = preflight({});
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
