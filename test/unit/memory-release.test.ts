import { describe, expect, it } from '@jest/globals';
import { QuietWatch, RELEASE_POLICY } from '../../lib/memory-release.ts';

const MIB = 1024 * 1024;
const quiet = { busyShare: 0.01, allocatedBytes: 10_000 };

/** Looks once a second from `from`, each with `look`'s figures; answers the seconds at which a release was due (each leaves half the heap). */
function run(watch: QuietWatch, seconds: number, look: (second: number) => { busyShare: number; allocatedBytes: number; heapBytes: number }, from = 0): number[] {
  const due: number[] = [];
  for (let second = from; second < from + seconds; second++) {
    const figures = look(second);
    if (watch.look({ ...figures, now: second * 1000 })) {
      due.push(second);
      watch.released(figures.heapBytes / 2, second * 1000);
    }
  }
  return due;
}

describe('QuietWatch', () => {
  it('releases after two quiet looks once the heap has grown 8 MiB', () => {
    expect(run(new QuietWatch(), 5, () => ({ ...quiet, heapBytes: 40 * MIB }))).toEqual([1]);
  });

  it('waits while the event loop is busy, and counts quiet looks again from the first quiet one', () => {
    const busyUntil = 10;
    const due = run(new QuietWatch(), 20, (second) => ({ busyShare: second < busyUntil ? 0.5 : 0.01, allocatedBytes: 0, heapBytes: 40 * MIB }));
    expect(due).toEqual([busyUntil + 1]);
  });

  it('takes a thread that allocates, or whose young generation was collected since the last look, for a busy one', () => {
    const allocating = run(new QuietWatch(), 10, () => ({ busyShare: 0.01, allocatedBytes: RELEASE_POLICY.allocatedBytes, heapBytes: 40 * MIB }));
    const collected = run(new QuietWatch(), 10, () => ({ busyShare: 0.01, allocatedBytes: -1, heapBytes: 40 * MIB }));
    expect([allocating, collected]).toEqual([[], []]);
  });

  it('leaves a heap that has not grown 8 MiB past the last release', () => {
    const watch = new QuietWatch();
    expect(run(watch, 3, () => ({ ...quiet, heapBytes: 40 * MIB }))).toEqual([1]);
    // The release left 20 MiB.
    expect(run(watch, 120, () => ({ ...quiet, heapBytes: 27 * MIB }), 3)).toEqual([]);
    expect(run(watch, 3, () => ({ ...quiet, heapBytes: 28 * MIB }), 123)).toEqual([123]);
  });

  it('releases at most once a minute, however often the heap grows and the thread goes quiet', () => {
    let heap = 40 * MIB;
    const due = run(new QuietWatch(), 150, () => {
      heap += 16 * MIB;
      return { ...quiet, heapBytes: heap };
    });
    expect(due).toEqual([1, 61, 121]);
  });
});
