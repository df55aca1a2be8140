// The V8 heap a node runs with. V8 sizes its heap from the machine's memory (a quarter of it, up to
// 4 GiB, and young semi-spaces of up to 64 MiB), and collects lazily below that: on a big machine a
// node under ingest held 340 MiB of heap it no longer used, and a 1 GiB box has no room for that.
// `-heap-mb` caps the old space and keeps the young generation small. V8 reads these limits only
// when the process starts, so `plumb serve` re-executes itself once with them (same PID: systemd
// and process supervisors see one process).

/** The young generation's semi-spaces under a cap: 8 MiB each (V8's default here is up to 64). */
const SEMI_SPACE_MB = 8;

/** An operator's own heap flags (on the command line or in NODE_OPTIONS) are left as they are. */
const HEAP_FLAG = /(^|\s)--max[-_](old[-_]space[-_]size([-_]percentage)?|semi[-_]space[-_]size|heap[-_]size)(?==|\s|$)/;

/**
 * The V8 flags to re-execute with, or null when the process already runs as it should: no cap asked
 * (`heapMb` 0), or heap flags already given (by the operator, or by the re-execution itself).
 */
export function heapFlags(heapMb: number, execArgv: readonly string[], nodeOptions: string | undefined): string[] | null {
  if (heapMb === 0) return null;
  if (execArgv.some((arg) => HEAP_FLAG.test(arg)) || HEAP_FLAG.test(nodeOptions ?? '')) return null;
  return [`--max-old-space-size=${heapMb}`, `--max-semi-space-size=${SEMI_SPACE_MB}`];
}

/** Replaces this process with the same command under the heap flags, when they are needed; returns otherwise. */
export function applyHeapLimit(heapMb: number): void {
  const flags = heapFlags(heapMb, process.execArgv, process.env.NODE_OPTIONS);
  if (!flags) return;
  try {
    if (!process.execve) throw new Error('this platform has no execve');
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...flags, ...process.argv.slice(1)], process.env);
  } catch (err) {
    // A platform without execve (Windows), or a binary that cannot be run again: the node still
    // starts, with V8's own heap sizing.
    process.stderr.write(`plumb: cannot apply -heap-mb ${heapMb} (${(err as Error).message}); running with V8's own heap limit\n`);
  }
}
