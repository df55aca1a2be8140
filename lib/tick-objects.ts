// Node's process.nextTick builds each tick object from an object literal with symbol keys. V8
// defines those properties through a call site that remembers the one shape it met; the first
// time it meets another it turns generic for good, and every tick object after that is built
// with four calls into V8's runtime (~5k instructions a tick; a tracker request takes six ticks).
// The shapes change when the last tick object has died and a full garbage collection drops them,
// as happens between two bursts of requests. One tick object kept from the process's first
// moments keeps them, so the call site never meets another (docs/benchmarks.md, "Tick objects
// and rows on V8's fast path").
import { createHook } from 'node:async_hooks';

let keptTickObject: object | undefined;

/** Keeps one of Node's tick objects for the life of the process. Call it before the node's modules load. */
export function keepTickObjectShapes(): void {
  if (keptTickObject !== undefined) return;
  // A tick object is reachable only from an init hook: one is enabled for this one tick.
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') keptTickObject ??= resource;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
}
