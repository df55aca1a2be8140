// What a node's process is started with, beyond its own settings: things the runtime reads only
// when a process starts, so `plumb serve` re-executes itself once with them (same PID: systemd and
// process supervisors see one process). Each was measured on an idle node (docs/decisions.md):
// - The V8 heap. V8 sizes it from the machine's memory (a quarter of it, up to 4 GiB, and young
//   semi-spaces of up to 64 MiB), and collects lazily below that: on a big machine a node under
//   ingest held 340 MiB of heap it no longer used, and a 1 GiB box has no room for that.
//   `-heap-mb` caps the old space and keeps the young generation small.
// - glibc's malloc arenas (MALLOC_ARENA_MAX): one per thread that allocates, up to eight per core,
//   each keeping its freed memory. The node's allocating threads are few and mostly idle (the
//   analytics engine has an allocator of its own): one arena takes ~15 MiB off an idle node.
// - glibc's trim and mmap thresholds (MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_) fixed at
//   their 128 KiB starting values: left to adjust themselves, they rise after the first large
//   buffers are freed, and the heap then keeps up to twice that free at its top (~9 MiB of an idle
//   node on a large data set).
// - The analytics engine's allocator (jemalloc in libchdb, JE_MALLOC_CONF): one arena too.
// - `gc()` exposed, so that a long export can have the young generation collected between its
//   slices: the engine's blocks reach JS as buffers whose memory V8 frees only when it collects
//   their small wrappers, which an export allocates too few of to fill the young generation; a
//   10M-row export held ~60 MiB of dead blocks until V8's external-memory limit forced a collection.
//   A quiet node also uses it to give back the heap a burst grew (./memory-release.ts).
// - Node's compile cache (NODE_COMPILE_CACHE), in the install's node_modules/.cache: Plumb runs
//   its TypeScript as it is, and stripping the types loads a compiler (and its wasm memory) into
//   the process; with the stripped code cached that compiler is never loaded again (~18 MiB), and
//   modules load faster. The cache lives beside the code, writable by whoever can change the code.
import { join } from 'node:path';

/** The young generation's semi-spaces under a cap: 8 MiB each (V8's default here is up to 64). */
export const SEMI_SPACE_MB = 8;

/**
 * The analytics engine's allocator (jemalloc inside libchdb, which reads JE_MALLOC_CONF): one arena
 * instead of one per core, so pages one thread freed serve the next thread's allocations instead of
 * waiting in another arena. A 10M-row takeout grew the node by ~107 MiB instead of ~120, and five
 * dashboard loads peaked at 739 MiB instead of 854, no slower.
 */
const ENGINE_ALLOCATOR = 'percpu_arena:disabled,narenas:1';

/** Where the compile cache lives: with the installed code, never in a directory others may write to. */
export const COMPILE_CACHE_DIR = join(import.meta.dirname, '..', 'node_modules', '.cache', 'plumb-compile');

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

/**
 * glibc's thresholds, fixed at the values it starts from (128 KiB): a freed block larger than the
 * mmap threshold raises it (up to 32 MiB) and the trim threshold to twice that, the memory the heap
 * then keeps free at its top. An idle node on the 10M-row data set: glibc's heap 33 → 25 MiB. Blocks
 * of 128 KiB and more (an export's blocks, a batch's insert body) are mapped and unmapped each time.
 */
const MALLOC_THRESHOLD_BYTES = String(128 * 1024);

/** The environment variables to add, none of which the operator has set (an empty one counts as set). */
export function startEnvironment(env: NodeJS.ProcessEnv, compileCacheDir = COMPILE_CACHE_DIR): Record<string, string> {
  const added: Record<string, string> = {};
  if (env.MALLOC_ARENA_MAX === undefined) added.MALLOC_ARENA_MAX = '1';
  // Either one set, or glibc's tunables given at all, is the operator's choice of thresholds.
  if (env.MALLOC_TRIM_THRESHOLD_ === undefined && env.MALLOC_MMAP_THRESHOLD_ === undefined && env.GLIBC_TUNABLES === undefined) {
    added.MALLOC_TRIM_THRESHOLD_ = MALLOC_THRESHOLD_BYTES;
    added.MALLOC_MMAP_THRESHOLD_ = MALLOC_THRESHOLD_BYTES;
  }
  if (env.JE_MALLOC_CONF === undefined) added.JE_MALLOC_CONF = ENGINE_ALLOCATOR;
  if (env.NODE_COMPILE_CACHE === undefined && env.NODE_DISABLE_COMPILE_CACHE === undefined) added.NODE_COMPILE_CACHE = compileCacheDir;
  return added;
}

const EXPOSE_GC = /(^|\s)--expose[-_]gc(?=\s|$)/;

/** `--expose-gc`, unless the process runs with it already. */
export function gcFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  return execArgv.some((arg) => EXPOSE_GC.test(arg)) || EXPOSE_GC.test(nodeOptions ?? '') ? [] : ['--expose-gc'];
}

/** The options of V8's `gc()` that Plumb uses: a scavenge, or the collection V8 runs under memory pressure. */
type GcOptions = { type: 'minor' } | { type: 'major'; flavor: 'last-resort' };

/** V8's `gc()` where it is exposed (a node started by `plumb serve`, in every thread); elsewhere undefined. */
export const exposedGc = (): ((options: GcOptions) => void) | undefined => (globalThis as { gc?: (options: GcOptions) => void }).gc;

/**
 * A scavenge of the young generation, where `gc()` is exposed; elsewhere nothing. About a
 * millisecond: call it between large units of work, not per request.
 */
export function collectYoungGeneration(): void {
  exposedGc()?.({ type: 'minor' });
}

/** Replaces this process with the same command under the heap flags and environment, when either is needed; returns otherwise. */
export function applyProcessSettings(heapMb: number): void {
  const flags = [...(heapFlags(heapMb, process.execArgv, process.env.NODE_OPTIONS) ?? []), ...gcFlags(process.execArgv, process.env.NODE_OPTIONS)];
  const added = startEnvironment(process.env);
  if (flags.length === 0 && Object.keys(added).length === 0) return;
  try {
    if (!process.execve) throw new Error('this platform has no execve');
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...flags, ...process.argv.slice(1)], { ...process.env, ...added });
  } catch (err) {
    // A platform without execve (Windows), or a binary that cannot be run again: the node still
    // starts, with V8's own heap sizing and the runtime's defaults.
    process.stderr.write(`plumb: cannot restart with -heap-mb ${heapMb} and ${Object.keys(added).join(', ') || 'no environment'} (${(err as Error).message}); running with the runtime's defaults\n`);
  }
}
