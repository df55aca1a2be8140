// Exports through HTTP on a generated data set (default 250,000 rows over 90 days, `--dataset 10m`
// for more): the site's pageviews in each format (GET /api/sites/{id}/hits/export), then the
// site's whole takeout as a csv zip and as xlsx, from `plumb serve` as a child process, each read
// to its end as fast as the client can. For each: rows/s, bytes, the server's memory (VmRSS sampled
// every 100 ms against the one before it started, and VmHWM; the target is at most 100 MiB of
// growth) and the event loop's responsiveness meanwhile (p99 of GET /api/status, polled every 50 ms).
import { readFileSync, rmSync } from 'node:fs';
import { type Instance, startInstance, tempDataDir } from '../support/instance.ts';
import { BENCH_OWNER, datasetSize, seedBenchDataDir } from './dataset.ts';
import { latencyFigure, memoryOf, pollLatency, sampleMemory } from './measure.ts';
import type { BenchSuite } from './run.ts';

const DAY = 86_400_000;
const MiB = 1024 * 1024;
const TARGET_GROWTH_MIB = 100;
const TIMEOUT_MS = 60 * 60_000;
/** The API's rate limits, raised so that the poller is never answered 429. */
const NODE_ENV = { PLUMB_LOG_LEVEL: 'warn', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' };
const FORMATS = ['csv', 'ndjson', 'json', 'parquet', 'xlsx'] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' / ');




/** Signs the bench's owner in; the session's Cookie header. */
export async function signIn(node: Instance): Promise<string> {
  const login = await fetch(`${node.url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(BENCH_OWNER) });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  return login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

/** An export the server answered with an error instead of the file. */
class ExportRefused extends Error {
  readonly status: number;
  constructor(url: string, status: number, body: string) {
    super(`GET ${url}: ${status} ${body}`);
    this.status = status;
  }
}

/** Reads a download to its end without keeping it; its bytes, and its newlines (rows of the line formats). */
export async function download(url: string, cookie: string): Promise<{ bytes: number; newlines: number }> {
  const res = await fetch(url, { headers: { Cookie: cookie } });
  if (res.status !== 200 || !res.body) throw new ExportRefused(url, res.status, await res.text());
  let bytes = 0;
  let newlines = 0;
  for await (const chunk of res.body) {
    bytes += chunk.byteLength;
    for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) newlines++;
  }
  return { bytes, newlines };
}

const suite: BenchSuite = {
  name: 'exports',
  description: 'pageview exports in every format and site takeouts through HTTP, with the server’s memory and event loop (default 250,000 rows, 90 days)',
  async run(args) {
    const rows = datasetSize(args, 250_000);
    const figures: Record<string, string | number> = { 'load average at start (1 / 5 / 15 min)': loadAverage() };
    const dataDir = tempDataDir('plumb-bench-exports-');
    let node: Instance | undefined;
    try {
      const generated = await seedBenchDataDir(dataDir, rows);
      const site = generated.site;
      figures['rows generated (pageviews + events)'] = `${thousands(generated.hits)} + ${thousands(generated.events)} in ${(generated.ms / 1000).toFixed(1)} s`;

      node = await startInstance({ dataDir, env: NODE_ENV, timeoutMs: TIMEOUT_MS });
      const pid = node.child.pid!;
      const range = new URLSearchParams({ from: new Date(Date.now() - 92 * DAY).toISOString().slice(0, 10), to: new Date(Date.now() + DAY).toISOString().slice(0, 10) });
      const runs: [label: string, path: string, rows: number][] = [
        ...FORMATS.map((format): [string, string, number] => [`pageviews ${format}`, `/api/sites/${site.id}/hits/export?${range}&format=${format}`, generated.hits]),
        ['takeout csv zip', `/api/sites/${site.id}/takeout?format=csv`, generated.hits + generated.events],
        ['takeout xlsx', `/api/sites/${site.id}/takeout?format=xlsx`, generated.hits + generated.events],
      ];
      for (const [label, path, expectedRows] of runs) {
        // Signed in anew for each: the xlsx exports of 10M rows outlast a session.
        const cookie = await signIn(node);
        await sleep(1000);
        const before = await memoryOf(pid);
        const peak = sampleMemory(pid);
        const poller = pollLatency(`${node.url}/api/status`);
        const started = performance.now();
        // A refusal the node is built to give (a query over the memory cap: 503) is a figure, not the end of the run.
        const downloaded = await download(`${node.url}${path}`, cookie).catch((error: unknown) => {
          if (error instanceof ExportRefused && error.status === 503) return error;
          throw error;
        });
        const ms = performance.now() - started;
        if (downloaded instanceof ExportRefused) {
          await poller.stop();
          peak.stop();
          figures[`${label}`] = `answered 503 after ${(ms / 1000).toFixed(1)} s: ${downloaded.message.replace(/^GET \S+ /, '')}`;
          continue;
        }
        const { bytes, newlines } = downloaded;
        const latencies = await poller.stop();
        const peakRss = Math.max(peak.stop().peakRss, (await memoryOf(pid)).rss);
        const after = await memoryOf(pid);
        if (label === 'pageviews csv' && newlines - 1 !== expectedRows) throw new Error(`the CSV export held ${newlines - 1} rows, not ${expectedRows}`);
        const growth = peakRss - before.rss;
        const anonGrowth = Math.max(peak.stop().peakAnon, after.anon) - before.anon;
        figures[`${label}: rows/s, MiB, s`] = `${thousands(expectedRows / (ms / 1000))} rows/s, ${(bytes / MiB).toFixed(1)} MiB, ${(ms / 1000).toFixed(1)} s`;
        figures[`${label}: VmRSS before → peak (MiB)`] =
          `${before.rss.toFixed(0)} → ${peakRss.toFixed(0)} (+${growth.toFixed(0)}; target ≤ ${TARGET_GROWTH_MIB}: ${growth <= TARGET_GROWTH_MIB ? 'met' : 'MISSED'}), VmHWM ${before.hwm.toFixed(0)} → ${after.hwm.toFixed(0)}; of it anonymous +${anonGrowth.toFixed(0)}`;
        figures[`${label}: GET /api/status p50 / p99 / max (ms)`] = latencyFigure(latencies);
        // As it goes too: a run of every format at 10M rows takes most of an hour.
        console.error(`${label}: ${figures[`${label}: VmRSS before → peak (MiB)`]}; ${figures[`${label}: rows/s, MiB, s`]}`);
      }
      figures['load average at end (1 / 5 / 15 min)'] = loadAverage();
      return figures;
    } finally {
      await node?.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

export default suite;
