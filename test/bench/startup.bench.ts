// Cold start and idle memory of `plumb serve`: time from spawn to /healthz and to /readyz on a
// fresh data dir (migrations included) and on an existing one, then RSS after the node idles.
import { rmSync } from 'node:fs';
import { type Instance, startInstance, tempDataDir } from '../support/instance.ts';
import { percentile, rssMiB } from './measure.ts';
import type { BenchSuite } from './run.ts';

const RUNS = 5;

async function timedStart(dataDir: string): Promise<{ instance: Instance; readyMs: number }> {
  const started = performance.now();
  const instance = await startInstance({ dataDir, env: { PLUMB_LOG_LEVEL: 'warn' } });
  return { instance, readyMs: performance.now() - started };
}

const median = (xs: number[]) => percentile(xs, 50);

const suite: BenchSuite = {
  name: 'startup',
  description: 'cold start (spawn → /readyz 200) and idle RSS of plumb serve',
  async run() {
    const fresh: number[] = [];
    const existing: number[] = [];
    const idle: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const dataDir = tempDataDir('plumb-bench-');
      const first = await timedStart(dataDir);
      fresh.push(first.readyMs);
      await first.instance.stop();
      const second = await timedStart(dataDir);
      existing.push(second.readyMs);
      await new Promise((r) => setTimeout(r, 2000));
      idle.push(await rssMiB(second.instance.child.pid!));
      await second.instance.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    return {
      'cold start, fresh data dir (median ms)': Math.round(median(fresh)),
      'cold start, existing data dir (median ms)': Math.round(median(existing)),
      'idle RSS after 2 s (median MiB)': median(idle).toFixed(1),
      runs: RUNS,
    };
  },
};

export default suite;
