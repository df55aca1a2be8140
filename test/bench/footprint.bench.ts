// The node's memory as an operator of a small box sees it: `plumb serve` as a child process, its
// VmHWM (peak resident memory) through each phase of a node's life, and its VmRSS a minute after
// start. Each phase's peak is its own: the kernel's high-water mark is reset before the phase
// (`/proc/<pid>/clear_refs`), so a phase is not charged with an earlier one's peak. Targets: every
// peak ≤ 768 MiB, idle ≤ 400 MiB. Phases: the first start on a fresh data dir; the first start on
// a data dir holding the generated data set (default 10 million rows) whose closed days were never
// counted, as after an upgrade (the leader counts them all at start); a start on it again; 60 s of
// tracker ingest at the node's maximum rate; the 30-day dashboard load; an export of every
// pageview as CSV.
import { rmSync, writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { type Instance, startInstance, tempDataDir } from '../support/instance.ts';
import { dashboardLoad } from './dashboard.bench.ts';
import { datasetSize, seedBenchDataDir } from './dataset.ts';
import { download, signIn } from './exports.bench.ts';
import { memoryOf, sampleMemory } from './measure.ts';
import type { BenchSuite } from './run.ts';

const DAY = 86_400_000;
const PEAK_TARGET_MIB = 768;
const IDLE_TARGET_MIB = 400;
const IDLE_AFTER_MS = 60_000;
const INGEST_S = 60;
const DASHBOARD_LOADS = 5;
const NODE_ENV = { PLUMB_LOG_LEVEL: 'warn', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000', PLUMB_INGEST_RATE_PER_SECOND: '1000000', PLUMB_INGEST_BURST: '1000000' };
const TIMEOUT_MS = 30 * 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const verdict = (mib: number, target: number) => `${mib.toFixed(0)} MiB (target ≤ ${target}: ${mib <= target ? 'met' : 'MISSED'})`;

/** Sets the process's VmHWM back to its VmRSS, so the next reading is the peak from now on. */
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/** Runs `phase` and answers the node's peak resident memory during it (VmHWM, and the sampled VmRSS as a check). */
async function peakDuring(node: Instance, phase: () => Promise<unknown>): Promise<number> {
  const pid = node.child.pid!;
  resetPeak(pid);
  const sampler = sampleMemory(pid);
  await phase();
  const sampled = sampler.stop();
  return Math.max(sampled.hwm, sampled.peakRss, (await memoryOf(pid)).hwm);
}

/** Starts a node and answers it with its peak from process start to a minute later, and its VmRSS then. */
async function startAndIdle(dataDir: string): Promise<{ node: Instance; startPeak: number; idle: { rss: number; anon: number; file: number }; readyMs: number }> {
  const started = performance.now();
  const node = await startInstance({ dataDir, env: NODE_ENV, timeoutMs: TIMEOUT_MS });
  const readyMs = performance.now() - started;
  await sleep(IDLE_AFTER_MS);
  const memory = await memoryOf(node.child.pid!);
  return { node, startPeak: memory.hwm, idle: memory, readyMs };
}

const suite: BenchSuite = {
  name: 'footprint',
  description: `the node's peak and idle memory through first start, restart on a data set, ingest, dashboard and export (default 10 million rows; peak ≤ ${PEAK_TARGET_MIB} MiB, idle ≤ ${IDLE_TARGET_MIB} MiB)`,
  async run(args) {
    const rows = datasetSize(args, 10_000_000);
    const dataDir = tempDataDir('plumb-bench-footprint-');
    const figures: Record<string, string | number> = {};
    let node: Instance | undefined;
    try {
      const first = await startAndIdle(dataDir);
      node = first.node;
      figures['first start (fresh data dir): ready in'] = `${(first.readyMs / 1000).toFixed(1)} s`;
      figures['first start: peak (VmHWM)'] = verdict(first.startPeak, PEAK_TARGET_MIB);
      figures['first start: idle VmRSS a minute later'] = `${verdict(first.idle.rss, IDLE_TARGET_MIB)}; anonymous ${first.idle.anon.toFixed(0)}, mapped files ${first.idle.file.toFixed(0)}`;
      await node.stop('SIGTERM');
      node = undefined;

      const generated = await seedBenchDataDir(dataDir, rows, false);
      const site = generated.site;
      figures['data set (pageviews + events)'] = `${generated.hits.toLocaleString('en-US')} + ${generated.events.toLocaleString('en-US')}`;

      const upgraded = await startAndIdle(dataDir);
      node = upgraded.node;
      figures['start after an upgrade (the closed days counted at start): peak (VmHWM)'] = verdict(upgraded.startPeak, PEAK_TARGET_MIB);
      figures['start after an upgrade: idle VmRSS a minute later'] = `${verdict(upgraded.idle.rss, IDLE_TARGET_MIB)}; anonymous ${upgraded.idle.anon.toFixed(0)}, mapped files ${upgraded.idle.file.toFixed(0)}`;
      await node.stop('SIGTERM');
      node = undefined;

      const existing = await startAndIdle(dataDir);
      node = existing.node;
      const running = node;
      figures['start on the data set: ready in'] = `${(existing.readyMs / 1000).toFixed(1)} s`;
      figures['start on the data set: peak (VmHWM)'] = verdict(existing.startPeak, PEAK_TARGET_MIB);
      figures['start on the data set: idle VmRSS a minute later'] = `${verdict(existing.idle.rss, IDLE_TARGET_MIB)}; anonymous ${existing.idle.anon.toFixed(0)}, mapped files ${existing.idle.file.toFixed(0)}`;

      let ingested = 0;
      const ingestPeak = await peakDuring(running, async () => {
        const result = await autocannon({
          url: `${running.url}/ingest`,
          method: 'POST',
          headers: { 'content-type': 'text/plain', origin: 'https://bench.example', 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },
          body: JSON.stringify({ url: 'https://bench.example/pricing?utm_source=newsletter', referrer: 'https://www.google.com/', width: 1440 }),
          connections: 50,
          duration: INGEST_S,
        });
        ingested = result['2xx'];
        // What was accepted is written to the store after the load: part of the phase.
        await sleep(5_000);
      });
      figures[`${INGEST_S} s of ingest at the maximum rate: peak`] = `${verdict(ingestPeak, PEAK_TARGET_MIB)}; ${Math.round(ingested / INGEST_S).toLocaleString('en-US')} events/s accepted`;

      const cookie = await signIn(running);
      const get = async (path: string) => {
        const res = await fetch(`${running.url}/api/sites/${site.id}${path}`, { headers: { Cookie: cookie } });
        const body = await res.text();
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.slice(0, 300)}`);
        return JSON.parse(body) as Record<string, unknown>;
      };
      const range = `from=${new Date(Date.now() - 29 * DAY).toISOString().slice(0, 10)}`;
      const dashboardPeak = await peakDuring(running, async () => {
        for (let i = 0; i < DASHBOARD_LOADS; i++) await dashboardLoad(get, range);
      });
      figures[`30-day dashboard load ×${DASHBOARD_LOADS}: peak`] = verdict(dashboardPeak, PEAK_TARGET_MIB);

      const whole = new URLSearchParams({ from: new Date(Date.now() - 92 * DAY).toISOString().slice(0, 10), to: new Date(Date.now() + DAY).toISOString().slice(0, 10) });
      let exported = 0;
      const exportPeak = await peakDuring(running, async () => {
        exported = (await download(`${running.url}/api/sites/${site.id}/hits/export?${whole}&format=csv`, cookie)).newlines - 1;
      });
      figures['export of every pageview as CSV: peak'] = `${verdict(exportPeak, PEAK_TARGET_MIB)}; ${exported.toLocaleString('en-US')} rows`;
      return figures;
    } finally {
      await node?.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

export default suite;
