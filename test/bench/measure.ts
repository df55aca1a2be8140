// Figures every bench suite reports: percentiles of timings and a process's resident memory.
import { readFile } from 'node:fs/promises';

/** The p-th percentile (nearest rank) of the samples. */
export const percentile = (xs: readonly number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** Resident memory of a process, from /proc. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
