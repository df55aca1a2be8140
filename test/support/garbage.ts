// A full garbage collection on demand, for tests that prove an object is let go of, or kept.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc()`, exposed for the calling test's process (jest's workers run without `--expose-gc`). */
export function fullGarbageCollection(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
