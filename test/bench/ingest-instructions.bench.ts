// Instructions a tracker pageview costs over HTTP, counted by valgrind's callgrind: the durable
// reference (bare-server.ts --durable) and `plumb serve`, each warmed up, then a fixed number of
// /ingest requests counted on the main thread and on all threads. Counted instructions do not
// drift with the machine as req/s and CPU seconds do (this machine's speed moves by up to 2× within
// minutes), so a change of a few percent in the work a request costs shows here, the same in every
// run. Each server is slowed ~30× under valgrind, so timers (pollers, flushes) fire ~30× as often
// per request: idle windows before and after the counted requests are counted too, and each
// thread's quieter one, scaled to a round's length, is subtracted. Needs valgrind (Debian's package `valgrind`).
// `--callgrind-dir <dir>` keeps the profiles there, with V8's map of compiled functions
// (/tmp/perf-<pid>.map), for `callgrind_annotate`. `--traffic site` sends traffic shaped like a
// site's (traffic.ts) instead of one visitor's pageview (`--traffic visitor`, the default).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../../lib/config.ts';
import { gcFlags, heapFlags, SEMI_SPACE_MB, startEnvironment } from '../../lib/process-settings.ts';
import { freePort, NODE_BIN, ROOT, startInstance, waitFor } from '../support/instance.ts';
import { percentile } from './measure.ts';
import type { BenchSuite } from './run.ts';
import { dataDirWithTrackedSite, LOADED_NODE_ENV, SITE_TRAFFIC_ENV, siteTraffic, TRACKER_BODY, TRACKER_HEADERS } from './traffic.ts';

/** Enough for V8 to optimise the request path and for the journal and the writer to reach their steady batches. */
const WARMUP_REQUESTS = 20_000;
/** Requests in each counted round. */
const COUNTED_REQUESTS = 5_000;
const ROUNDS = 3;
const CONNECTIONS = 10;
/**
 * The writer's batches, by size only: at full speed a node fills a batch of 10,000 within its flush
 * interval, but slowed ~30× it would store every second's ~160 events as a batch, and the costs of
 * a batch (the insert, its part in the store, the stored-batch listeners) would weigh ~60× as much
 * a request, and vary with the run's timing. Batches of this size, with a flush interval longer
 * than the run, come at the same requests in every run: two in each counted round.
 */
const BATCH_SIZE = 2_500;
/**
 * Both servers keep their young generation at a loaded node's size. V8 shrinks it when allocation
 * slows, as it does ~30× under valgrind, by as much as it likes in each process: a round of
 * Plumb's took 21 scavenges in one run and 59 in another, 6k and 14k instructions a request.
 */
const YOUNG_GENERATION_FLAGS = [`--min-semi-space-size=${SEMI_SPACE_MB}`, `--max-semi-space-size=${SEMI_SPACE_MB}`];
/** After the warm-up and the counted requests: the writer stores their last batch (slowed as it is under valgrind). */
const DRAIN_MS = 10_000;

interface Instructions {
  mainThread: number;
  process: number;
}

/** Each round's instructions a request, and the median round's (a round may hold a full garbage collection or a compilation the others do not). */
interface Counted extends Instructions {
  rounds: Instructions[];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: readonly number[]) => percentile(values, 50);

function callgrind(args: string[]): void {
  execFileSync('callgrind_control', args, { stdio: 'ignore' });
}

/** Instructions by thread in one dump of a callgrind run (files `<prefix>.<dump>-<thread>`). */
function dumpedInstructions(dir: string, prefix: string, dump: number): Map<string, number> {
  const byThread = new Map<string, number>();
  for (const file of readdirSync(dir).filter((name) => name.startsWith(`${prefix}.${dump}-`))) {
    const text = readFileSync(join(dir, file), 'utf8');
    byThread.set(/^thread: (\d+)$/m.exec(text)?.[1] ?? file, Number(/^totals: (\d+)$/m.exec(text)?.[1] ?? 0));
  }
  return byThread;
}

/**
 * Runs `args` under callgrind with counting off, waits for `ready`, warms the server up, then
 * counts ROUNDS rounds of COUNTED_REQUESTS /ingest requests and the writer's drain, between two idle
 * windows; each round subtracts the quieter window's count, scaled to its own length.
 */
async function counted(label: string, dir: string, port: number, args: string[], env: Record<string, string>, ready: () => Promise<boolean>, keep: boolean, site: boolean): Promise<Counted> {
  const valgrind: ChildProcess = spawn(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${join(dir, `${label}.%p`)}`, NODE_BIN, ...YOUNG_GENERATION_FLAGS, ...(keep ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, `${label}-v8.log`)}`] : []), ...args],
    { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  valgrind.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise((resolve) => valgrind.once('exit', resolve));
  try {
    await waitFor(
      async () => {
        if (valgrind.exitCode !== null) throw new Error(`${label} exited under valgrind (is Debian's valgrind installed?):\n${output}`);
        return ready();
      },
      300_000,
      () => `${label} did not become ready under valgrind:\n${output}`,
    );
    const requests = site ? siteTraffic() : undefined;
    const send = async (amount: number) => {
      const result = await autocannon({ url: `http://127.0.0.1:${port}/ingest`, method: 'POST', headers: TRACKER_HEADERS, body: TRACKER_BODY, requests, connections: CONNECTIONS, amount, timeout: 60 });
      if (result['2xx'] !== amount) throw new Error(`${label}: ${result['2xx']} of ${amount} requests accepted`);
    };
    await send(WARMUP_REQUESTS);
    // The warm-up's last batch is stored before counting starts.
    await pause(DRAIN_MS);
    const pid = String(valgrind.pid);
    const prefix = `${label}.${pid}`;
    callgrind(['-i', 'on', pid]);
    // An idle window, each round dumped on its own, then a second idle window (callgrind's parts
    // 1, 2, …). What an idle node does once (a store's code compiled at its first use, a periodic
    // job) lands in one window at most: each thread's quieter window is the one subtracted.
    const idleWindow = async (ms: number, part: number) => {
      const from = performance.now();
      await pause(ms);
      callgrind(['-d', pid]);
      return { ms: performance.now() - from, byThread: dumpedInstructions(dir, prefix, part) };
    };
    const idleBefore = await idleWindow(DRAIN_MS * 2, 1);
    const roundMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const from = performance.now();
      await send(COUNTED_REQUESTS);
      await pause(DRAIN_MS);
      callgrind(['-d', pid]);
      roundMs.push(performance.now() - from);
    }
    const idleAfter = await idleWindow(median(roundMs), ROUNDS + 2);
    const threads = new Set([...idleBefore.byThread.keys(), ...idleAfter.byThread.keys()]);
    const idlePerMs = new Map([...threads].map((thread) => [thread, Math.min(...[idleBefore, idleAfter].map((idle) => (idle.byThread.get(thread) ?? 0) / idle.ms))]));
    const rounds = roundMs.map((ms, round) => {
      const busy = dumpedInstructions(dir, prefix, round + 2);
      const perRequest = (counted: Iterable<string>) => {
        let instructions = 0;
        for (const thread of counted) instructions += (busy.get(thread) ?? 0) - (idlePerMs.get(thread) ?? 0) * ms;
        return instructions / COUNTED_REQUESTS;
      };
      return { mainThread: perRequest(['1']), process: perRequest(new Set([...busy.keys(), ...threads])) };
    });
    return { rounds, mainThread: median(rounds.map((r) => r.mainThread)), process: median(rounds.map((r) => r.process)) };
  } finally {
    valgrind.kill('SIGKILL');
    await exited;
  }
}

const thousands = (instructions: number) => `${Math.round(instructions / 1000)}k`;

const suite: BenchSuite = {
  name: 'ingest-instructions',
  description: `POST /ingest under callgrind: instructions a request (median of ${ROUNDS} rounds of ${COUNTED_REQUESTS} requests, ${CONNECTIONS} connections, after ${WARMUP_REQUESTS} to warm up), durable reference and Plumb`,
  async run(args) {
    const keptAt = args.indexOf('--callgrind-dir');
    const keep = keptAt >= 0;
    const trafficAt = args.indexOf('--traffic');
    const traffic = trafficAt >= 0 ? args[trafficAt + 1] : 'visitor';
    if (traffic !== 'visitor' && traffic !== 'site') throw new Error(`--traffic is visitor (one visitor's pageview, the default) or site, not ${traffic}`);
    const site = traffic === 'site';
    const dir = keep ? args[keptAt + 1] : mkdtempSync(join(tmpdir(), 'plumb-callgrind-'));
    mkdirSync(dir, { recursive: true });
    const { dataDir } = await dataDirWithTrackedSite('plumb-bench-instructions-');
    try {
      const env = { ...LOADED_NODE_ENV, PLUMB_INGEST_BATCH_SIZE: String(BATCH_SIZE), PLUMB_INGEST_FLUSH_MS: '60000' };
      // The first start (migrations, the analytics store's tables) runs at full speed.
      await (await startInstance({ dataDir, env: { ...env, PLUMB_INGEST_FLUSH_MS: '1000' } })).stop();

      const durablePort = await freePort();
      const durable = await counted(
        'durable',
        dir,
        durablePort,
        [join(ROOT, 'test/bench/bare-server.ts'), String(durablePort), '--durable', join(dataDir, 'bare-durable.log')],
        {},
        () => fetch(`http://127.0.0.1:${durablePort}/`, { method: 'POST', body: '{}' }).then((res) => res.ok, () => false),
        keep,
        site,
      );

      // `plumb serve` re-executes itself with these; given up front, it runs as it would.
      const { heapMb } = loadConfig({ env: {} });
      const plumbPort = await freePort();
      const plumb = await counted(
        'plumb',
        dir,
        plumbPort,
        [...(heapFlags(heapMb, [], undefined) ?? []), ...gcFlags([], undefined), join(ROOT, 'bin/plumb.ts'), 'serve', '-port', String(plumbPort), '-host', '127.0.0.1'],
        { ...startEnvironment({}), ...env, ...(site ? SITE_TRAFFIC_ENV : {}), PLUMB_DATA_DIR: dataDir },
        () => fetch(`http://127.0.0.1:${plumbPort}/readyz`).then((res) => res.status === 200, () => false),
        keep,
        site,
      );

      const roundsOf = (counted: Counted) => counted.rounds.map((round) => `${thousands(round.mainThread)} / ${thousands(round.process)}`).join(', ');
      return {
        traffic: site ? 'shaped like a site\'s: a new visitor every three pageviews, 200 pages' : 'one visitor\'s pageview, again and again',
        'durable reference: rounds, main / all': roundsOf(durable),
        'Plumb: rounds, main / all': roundsOf(plumb),
        'durable reference: a request, main / all': `${thousands(durable.mainThread)} / ${thousands(durable.process)} instructions`,
        'Plumb: a request, main / all': `${thousands(plumb.mainThread)} / ${thousands(plumb.process)} instructions`,
        'Plumb ÷ reference, main / all': `${(plumb.mainThread / durable.mainThread).toFixed(2)}× / ${(plumb.process / durable.process).toFixed(2)}×`,
        'Plumb beyond the reference, main / all': `${thousands(plumb.mainThread - durable.mainThread)} / ${thousands(plumb.process - durable.process)} instructions`,
        ...(keep ? { profiles: dir } : {}),
      };
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      if (!keep) rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default suite;
