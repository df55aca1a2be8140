// The JavaScript heap a node asks V8 for: which flags `plumb serve` re-executes itself with.
import { describe, expect, it } from '@jest/globals';
import { heapFlags } from '../../lib/heap.ts';

describe('heapFlags', () => {
  it('caps the old space at -heap-mb and keeps the young semi-spaces at 8 MiB', () => {
    expect(heapFlags(256, [], undefined)).toEqual(['--max-old-space-size=256', '--max-semi-space-size=8']);
  });

  it('asks for nothing with -heap-mb 0 (V8 sizes the heap itself)', () => {
    expect(heapFlags(0, [], undefined)).toBeNull();
  });

  it('asks for nothing once the process runs with heap flags, so it re-executes at most once', () => {
    expect(heapFlags(256, ['--max-old-space-size=256', '--max-semi-space-size=8'], undefined)).toBeNull();
  });

  it('leaves an operator’s own heap flags alone, in node’s arguments or in NODE_OPTIONS, in either spelling', () => {
    expect(heapFlags(256, ['--max_old_space_size=1024'], undefined)).toBeNull();
    expect(heapFlags(256, [], '--enable-source-maps --max-old-space-size=2048')).toBeNull();
    expect(heapFlags(256, [], '--max-heap-size=700')).toBeNull();
    expect(heapFlags(256, [], '--max-semi-space-size=16')).toBeNull();
  });

  it('takes a heap sized as a share of the machine’s memory as the operator’s choice too', () => {
    expect(heapFlags(256, ['--max-old-space-size-percentage=50'], undefined)).toBeNull();
  });

  it('is not fooled by other flags', () => {
    expect(heapFlags(256, ['--enable-source-maps', '--max-http-header-size=16384'], '--no-deprecation')).toEqual(['--max-old-space-size=256', '--max-semi-space-size=8']);
  });
});
