// Tracker ingest under load, every server warmed up first: /ingest on one `plumb serve` process
// against two references in the same run: the bare node:http server, and the same server made
// durable (each body appended and fsync'd with group commit before the 202: what the disk alone
// costs). Plumb's maximum and the durable reference's are measured in alternating rounds, because a
// shared machine's speed drifts by more than the gap being measured within minutes. Then p99 at
// 80% of Plumb's maximum, with the durable reference at that same rate beside it: under
// autocannon's rate limit (each connection sends its second's share at once, then waits), in
// alternating pairs for the same reason and because one run's p99 is its longest stall's (see
// load()); then paced evenly (latency counted from when each request was due). Then how fast accepted events
// reach the analytics store and the RSS while they do. Last, Plumb acknowledging on write
// (-ingest-sync write: the journal fsync'd every second instead of before each 202), and Plumb
// under traffic shaped like a site's (many visitors, short visits, many pages).
// The load generator runs in this process on the same two cores, so its CPU a request and the
// machine's idle share are printed beside the maximum rates: they tell whether a rate is bound by a
// server's thread or by the cores.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { silentLog } from '../../lib/log.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { NODE_BIN, ROOT, startInstance } from '../support/instance.ts';
import { exposedSamples } from '../support/metrics.ts';
import { percentile, rssMiB } from './measure.ts';
import { type PacedResult, pacedLoad } from './paced-load.ts';
import type { BenchSuite } from './run.ts';
import { dataDirWithTrackedSite, LOADED_NODE_ENV, SITE_TRAFFIC_ENV, siteTraffic, TRACKER_BODY, TRACKER_HEADERS } from './traffic.ts';

const DURATION_S = 10;
/** Rounds of the durable reference's maximum then Plumb's, alternating. */
const MAX_RATE_ROUNDS = 3;
/** Pairs of runs at 80% of Plumb's maximum, the durable reference's then Plumb's. */
const STEADY_PAIRS = 3;
const CONNECTIONS = 50;

interface Load {
  rps: number;
  p50: number;
  /** autocannon's p99: under a rate limit it counts a slow answer again for every millisecond it waited (below). */
  p99: number;
  /** The p99 of the answers as they came, each counted once. */
  answersP99: number;
  max: number;
  accepted: number;
  other: number;
}

/**
 * Under a rate limit autocannon corrects for coordinated omission: each answer that took R ms is
 * recorded with R − 1, R − 2, … 1 ms beside it (HdrHistogram's expected interval, which it sets to
 * 1 ms whatever the rate), so a stall of 100 ms on every connection adds fifty times a hundred
 * samples, and its p99 follows the run's longest stalls. That p99 is the rule's figure, as it has
 * always been measured; the answers' own p99 is printed beside it.
 */
async function load(url: string, overallRate?: number, duration = DURATION_S, requests?: autocannon.Request[]): Promise<Load> {
  const latencies: number[] = [];
  // Without a callback autocannon answers its instance, which is also the run's promise.
  const instance = autocannon({ url: `${url}/ingest`, method: 'POST', headers: TRACKER_HEADERS, body: TRACKER_BODY, connections: CONNECTIONS, duration, overallRate, requests }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  // Without a rate limit autocannon counts each answer once itself, and the load generator, on the
  // cores the server uses, does no more work an answer than it did.
  if (overallRate !== undefined) {
    instance.on('response', (_client, statusCode, _bytes, ms) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(ms);
    });
  }
  const result = await instance;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    answersP99: overallRate === undefined ? result.latency.p99 : latencies.length > 0 ? percentile(latencies, 99) : 0,
    max: result.latency.max,
    accepted: result['2xx'],
    other: result.non2xx + result.errors + result.timeouts,
  };
}

/** The item whose figure (`figures`, in the items' order) is the median one: of an odd count, the middle one. */
function atMedian<T>(items: readonly T[], figures: readonly number[]): T {
  return items[figures.indexOf(percentile(figures, 50))];
}

/** The same request at an even rate, each request's latency from when it was due (paced-load.ts). */
function evenLoad(url: string, rate: number): Promise<PacedResult> {
  return pacedLoad(url, { rate, durationS: DURATION_S, connections: CONNECTIONS, method: 'POST', path: '/ingest', headers: TRACKER_HEADERS, body: TRACKER_BODY });
}

/** Linux's USER_HZ: the unit of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) a process has used so far, all threads or only its main thread.
 * Per request, it is the steadier figure on a shared machine: req/s moves with the neighbours' load.
 */
function cpuSeconds(pid: number, mainThreadOnly = false): number {
  const stat = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** The machine's CPU time so far, in ticks: all of it, and the idle part (the first line of /proc/stat). */
function machineTicks(): { total: number; idle: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  return { total: fields.reduce((sum, value) => sum + value, 0), idle: fields[3] };
}

/** Waits (up to 30 s) until a process uses less than 5% of a core over half a second. */
async function settled(pid: number): Promise<void> {
  const deadline = performance.now() + 30_000;
  let before = cpuSeconds(pid);
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = cpuSeconds(pid);
    if (now - before < 0.025) return;
    before = now;
  }
}

/**
 * Every server is measured warm, as one in service runs: a few seconds of the same load first, so
 * the figures are not those of the JIT compiling the request path (Plumb's path is long, so a cold
 * start cost it a third of its rate; the references' few functions are compiled at once).
 */
const WARM_UP_S = 3;

type Measured = Load & { cpuUs: number; mainCpuUs: number; generatorCpuUs: number; idleShare: number; warmUpAccepted: number; rounds?: JournalRounds };

/** A durable server's group-commit rounds over a run: how many a second, and requests a round. */
interface JournalRounds {
  perSecond: number;
  requests: number;
}

/** Serves Plumb's /metrics to the bench, which reads the journal's fsyncs (one a round) from it. */
const METRICS_TOKEN = 'ingest-bench-metrics-token-0123456789';

/** The journal's fsyncs so far on /metrics (one a round), and how many of them took over 25 ms. */
async function journalFsyncs(url: string): Promise<{ count: number; over25ms: number }> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const samples = exposedSamples(await res.text());
  const count = samples.get('plumb_ingest_journal_fsync_duration_seconds_count');
  const within25ms = samples.get('plumb_ingest_journal_fsync_duration_seconds_bucket{le="0.025"}');
  if (count === undefined || within25ms === undefined) throw new Error('GET /metrics: no journal fsync histogram');
  return { count, over25ms: count - within25ms };
}

const plumbRounds = async (url: string) => (await journalFsyncs(url)).count;

/**
 * Runs a load after the warm-up, and the CPU the server used for it, in µs per answered request
 * (process and main thread); beside it, the load generator's (this process), and the share of the
 * machine's CPU time left idle: the two cores are shared by both, so these say which one bounds a rate.
 */
async function measured(url: string, pid: number, run: () => Promise<Load>, requests?: autocannon.Request[], roundsSoFar?: () => Promise<number>): Promise<Measured> {
  const warmUp = await load(url, undefined, WARM_UP_S, requests);
  const rounds0 = await roundsSoFar?.();
  const [process0, main0, generator0, machine0, started] = [cpuSeconds(pid), cpuSeconds(pid, true), process.cpuUsage(), machineTicks(), performance.now()];
  const result = await run();
  const [generator, machine1, seconds] = [process.cpuUsage(generator0), machineTicks(), (performance.now() - started) / 1000];
  const answered = Math.max(1, result.accepted + result.other);
  const rounds = roundsSoFar && rounds0 !== undefined ? Math.max(1, (await roundsSoFar()) - rounds0) : undefined;
  return {
    rounds: rounds === undefined ? undefined : { perSecond: rounds / seconds, requests: result.accepted / rounds },
    ...result,
    cpuUs: ((cpuSeconds(pid) - process0) * 1e6) / answered,
    mainCpuUs: ((cpuSeconds(pid, true) - main0) * 1e6) / answered,
    generatorCpuUs: (generator.user + generator.system) / answered,
    idleShare: (machine1.idle - machine0.idle) / Math.max(1, machine1.total - machine0.total),
    warmUpAccepted: warmUp.accepted,
  };
}

/**
 * The bare reference server; with `durableFile`, it fsyncs every body there before its 202, and
 * `rounds()` asks it (SIGUSR2) how many group-commit rounds it has run.
 */
async function startBare(durableFile?: string): Promise<{ url: string; pid: number; stop(): void; rounds(): Promise<number> }> {
  const args = [join(ROOT, 'test/bench/bare-server.ts'), '0', ...(durableFile ? ['--durable', durableFile] : [])];
  const child = spawn(NODE_BIN, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
  const rounds = () =>
    new Promise<number>((resolve) => {
      child.stdout.once('data', (d: Buffer) => resolve(Number(/rounds (\d+)/.exec(d.toString())?.[1])));
      child.kill('SIGUSR2');
    });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => child.kill('SIGTERM'), rounds };
}

const roundsFigure = (load: Measured) => (load.rounds ? `${Math.round(load.rounds.perSecond)} (${load.rounds.requests.toFixed(1)})` : 'n/a');

const suite: BenchSuite = {
  name: 'ingest',
  description: `POST /ingest, ${CONNECTIONS} connections × ${DURATION_S} s per run, against a bare node:http server, bare and durable`,
  async run() {
    const { dataDir, teamId } = await dataDirWithTrackedSite('plumb-bench-ingest-');

    const bare = await startBare();
    const bareLoad = await measured(bare.url, bare.pid, () => load(bare.url));
    bare.stop();
    // On the disk Plumb's journal uses: the data dir.
    const durableFile = join(dataDir, 'bare-durable.log');
    const durable = await startBare(durableFile);

    const plumb = await startInstance({ dataDir, env: { ...LOADED_NODE_ENV, PLUMB_METRICS_TOKEN: METRICS_TOKEN } });
    let peakRss = 0;
    const sampler = setInterval(() => {
      rssMiB(plumb.child.pid!).then((mib) => (peakRss = Math.max(peakRss, mib)), () => undefined);
    }, 250);
    // Plumb's time under load, for the end-to-end rate: its rounds, its steady load and its drain.
    let plumbLoadMs = 0;
    const rounds: { durable: Measured; plumb: Measured }[] = [];
    for (let round = 0; round < MAX_RATE_ROUNDS; round++) {
      // Plumb's writer and the store's merges finish the last round first: the reference gets the machine to itself, as Plumb does.
      await settled(plumb.child.pid!);
      const durableRound = await measured(durable.url, durable.pid, () => load(durable.url), undefined, durable.rounds);
      const started = performance.now();
      rounds.push({ durable: durableRound, plumb: await measured(plumb.url, plumb.child.pid!, () => load(plumb.url), undefined, () => plumbRounds(plumb.url)) });
      plumbLoadMs += performance.now() - started;
    }
    // The round whose ratio is the median one stands for the run; every round's is printed too.
    const ratios = rounds.map((r) => r.plumb.rps / r.durable.rps);
    const { durable: durableLoad, plumb: full } = atMedian(rounds, ratios);
    const steadyRate = Math.round(full.rps * 0.8);
    // The p99 rule at 80% of the maximum, in alternating pairs as the maximum is: one run's p99
    // follows its longest stall (see load()), and a stall of the disk's comes when it comes.
    const steadyPairs: { durable: Load; plumb: Load; slowFsyncs: number }[] = [];
    for (let pair = 0; pair < STEADY_PAIRS; pair++) {
      await settled(plumb.child.pid!);
      const durableSteady = await load(durable.url, steadyRate);
      const fsyncsBefore = await journalFsyncs(plumb.url);
      const started = performance.now();
      const plumbSteady = await load(plumb.url, steadyRate);
      plumbLoadMs += performance.now() - started;
      steadyPairs.push({ durable: durableSteady, plumb: plumbSteady, slowFsyncs: (await journalFsyncs(plumb.url)).over25ms - fsyncsBefore.over25ms });
    }
    const medianPair = atMedian(steadyPairs, steadyPairs.map((p) => p.plumb.p99 - p.durable.p99));
    const pacedStarted = performance.now();
    const pacedSteady = await evenLoad(plumb.url, steadyRate);
    const loadEnded = performance.now();
    // A graceful stop drains the journal into the store; the clock stops when every event is stored.
    await plumb.stop('SIGTERM');
    const drained = performance.now();
    plumbLoadMs += drained - pacedStarted;
    clearInterval(sampler);

    const durablePacedSteady = await evenLoad(durable.url, steadyRate);
    durable.stop();

    const analytics = await openAnalyticsStore({ dataDir, log: silentLog });
    const [{ stored }] = await analytics.query<{ stored: string }>('SELECT count() AS stored FROM {db:Identifier}.hits', { db: analytics.tenantDatabase(teamId) });
    await analytics.close();

    const onWrite = await startInstance({ dataDir, env: { ...LOADED_NODE_ENV, PLUMB_INGEST_SYNC: 'write' } });
    const writeLoad = await measured(onWrite.url, onWrite.child.pid!, () => load(onWrite.url));
    await onWrite.stop('SIGTERM');

    const site = await startInstance({ dataDir, env: { ...LOADED_NODE_ENV, ...SITE_TRAFFIC_ENV } });
    const siteRequests = siteTraffic();
    const siteLoad = await measured(site.url, site.child.pid!, () => load(site.url, undefined, DURATION_S, siteRequests), siteRequests);
    await site.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
    const accepted = rounds.reduce((sum, r) => sum + r.plumb.warmUpAccepted + r.plumb.accepted, 0) + steadyPairs.reduce((sum, p) => sum + p.plumb.accepted, 0) + pacedSteady.accepted;

    return {
      'bare node:http req/s': Math.round(bareLoad.rps),
      'bare node:http p99 ms': bareLoad.p99,
      'bare node:http CPU µs/request': Math.round(bareLoad.cpuUs),
      'bare durable (group-commit fsync) req/s': Math.round(durableLoad.rps),
      'bare durable / bare': `${Math.round((durableLoad.rps / bareLoad.rps) * 100)}%`,
      'bare durable p99 ms': durableLoad.p99,
      'bare durable CPU µs/request': Math.round(durableLoad.cpuUs),
      'plumb /ingest req/s (max)': Math.round(full.rps),
      'plumb / bare': `${Math.round((full.rps / bareLoad.rps) * 100)}%`,
      'plumb / bare durable (target ≥ 0.6×), the median round': `${(full.rps / durableLoad.rps).toFixed(2)}×`,
      'each round: durable reference → plumb req/s (ratio)': rounds.map((r, i) => `${Math.round(r.durable.rps)} → ${Math.round(r.plumb.rps)} (${ratios[i].toFixed(2)}×)`).join('; '),
      'plumb p50 / p99 ms at max': `${full.p50} / ${full.p99}`,
      'plumb CPU µs/request at max (main thread / process)': `${Math.round(full.mainCpuUs)} / ${Math.round(full.cpuUs)}`,
      'load generator CPU µs/request at max (durable reference / plumb)': `${Math.round(durableLoad.generatorCpuUs)} / ${Math.round(full.generatorCpuUs)}`,
      'machine idle at max (durable reference / plumb)': `${Math.round(durableLoad.idleShare * 100)}% / ${Math.round(full.idleShare * 100)}%`,
      'fsync rounds a second at max (requests a round): durable reference / plumb': `${roundsFigure(durableLoad)} / ${roundsFigure(full)}`,
      'p99 ms at 80% of max, autocannon (target: plumb within 5 ms of bare durable), the median pair: plumb / bare durable': `${medianPair.plumb.p99} / ${medianPair.durable.p99}`,
      'each pair at 80%: plumb / bare durable p99 ms (answers\' own p99; longest answer)': steadyPairs
        .map((p) => `${p.plumb.p99} / ${p.durable.p99} (${p.plumb.answersP99.toFixed(1)} / ${p.durable.answersP99.toFixed(1)}; ${p.plumb.max} / ${p.durable.max})`)
        .join('; '),
      'plumb journal fsyncs over 25 ms in each run at 80%': steadyPairs.map((p) => p.slowFsyncs).join(', '),
      'p99 ms at 80% of max, evenly paced (open loop): plumb / bare durable': `${pacedSteady.p99.toFixed(1)} / ${durablePacedSteady.p99.toFixed(1)} (p50 ${pacedSteady.p50.toFixed(1)} / ${durablePacedSteady.p50.toFixed(1)}; 202s a second ${Math.round(pacedSteady.rps)} / ${Math.round(durablePacedSteady.rps)})`,
      'plumb non-202 responses': rounds.reduce((sum, r) => sum + r.plumb.other, 0) + steadyPairs.reduce((sum, p) => sum + p.plumb.other, 0) + pacedSteady.other,
      'events accepted (202)': accepted,
      'events stored': Number(stored),
      'stored events/s end to end (202 → stored)': Math.round(Number(stored) / (plumbLoadMs / 1000)),
      'drain after load (ms)': Math.round(drained - loadEnded),
      'peak RSS under load (MiB)': peakRss.toFixed(0),
      'plumb -ingest-sync write req/s (max)': Math.round(writeLoad.rps),
      'plumb -ingest-sync write / bare durable': `${(writeLoad.rps / durableLoad.rps).toFixed(2)}×`,
      'plumb -ingest-sync write p50 / p99 ms at max': `${writeLoad.p50} / ${writeLoad.p99}`,
      'plumb -ingest-sync write non-202 responses': writeLoad.other,
      'plumb req/s (max), visits of 3 pages on 200 pages': Math.round(siteLoad.rps),
      'plumb / bare durable, visits of 3 pages': `${(siteLoad.rps / durableLoad.rps).toFixed(2)}×`,
      'plumb CPU µs/request, visits of 3 pages (main thread / process)': `${Math.round(siteLoad.mainCpuUs)} / ${Math.round(siteLoad.cpuUs)}`,
      'plumb non-202 responses, visits of 3 pages': siteLoad.other,
    };
  },
};

export default suite;
