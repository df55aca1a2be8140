// Figures every bench suite reports: percentiles of timings and a process's resident memory.
import { readFile } from 'node:fs/promises';

/** The p-th percentile (nearest rank) of the samples. */
export const percentile = (xs: readonly number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** Resident memory of a process, from /proc. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A process's peak (VmHWM) and current (VmRSS) resident memory in MiB, and the current split of
 * VmRSS: anonymous memory (heaps: what the process allocated) and file pages (mapped code and
 * files, which the kernel can drop and read again under pressure).
 */
export async function memoryOf(pid: number): Promise<{ hwm: number; rss: number; anon: number; file: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { hwm: kib('VmHWM') / 1024, rss: kib('VmRSS') / 1024, anon: kib('RssAnon') / 1024, file: kib('RssFile') / 1024 };
}

/** Samples a process's memory every 100 ms until stopped; the highest VmHWM, VmRSS and RssAnon read. */
export function sampleMemory(pid: number) {
  let hwm = 0;
  let peakRss = 0;
  let peakAnon = 0;
  const timer = setInterval(() => {
    // A process that has just exited has no /proc entry left: its last sample stands.
    memoryOf(pid).then(
      (memory) => {
        hwm = Math.max(hwm, memory.hwm);
        peakRss = Math.max(peakRss, memory.rss);
        peakAnon = Math.max(peakAnon, memory.anon);
      },
      () => undefined,
    );
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return { hwm, peakRss, peakAnon };
    },
  };
}

/** GET `url` one request at a time, a new one every 50 ms (at once after a slower answer), until stopped; the latencies. */
export function pollLatency(url: string) {
  const latencies: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
      const took = performance.now() - started;
      latencies.push(took);
      if (took < 50) await sleep(50 - took);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return latencies;
    },
  };
}

/** Latencies as "p50 / p99 / max (n requests)", in ms. */
export const latencyFigure = (xs: number[]) => `${percentile(xs, 50).toFixed(1)} / ${percentile(xs, 99).toFixed(1)} / ${Math.max(...xs).toFixed(1)} (${xs.length} requests)`;
