// What `plumb serve` re-executes itself with: the JavaScript heap it asks V8 for, and the
// environment the runtime reads only at start (malloc arenas, the compile cache).
import { describe, expect, it } from '@jest/globals';
import { gcFlags, heapFlags, startEnvironment } from '../../lib/process-settings.ts';

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

describe('gcFlags', () => {
  it('exposes gc() so that exports can collect the young generation between their slices', () => {
    expect(gcFlags([], undefined)).toEqual(['--expose-gc']);
  });

  it('asks for nothing when gc() is exposed already, in node’s arguments or in NODE_OPTIONS, in either spelling', () => {
    expect(gcFlags(['--max-old-space-size=256', '--expose-gc'], undefined)).toEqual([]);
    expect(gcFlags([], '--enable-source-maps --expose_gc')).toEqual([]);
    expect(gcFlags(['--expose-gc-as=collect'], undefined)).toEqual(['--expose-gc']);
  });
});

describe('startEnvironment', () => {
  it('asks for one malloc arena with fixed thresholds, one arena of the analytics engine’s allocator and the compile cache beside the code', () => {
    expect(startEnvironment({ PATH: '/usr/bin' }, '/opt/plumb/node_modules/.cache/plumb-compile')).toEqual({
      MALLOC_ARENA_MAX: '1',
      MALLOC_TRIM_THRESHOLD_: '131072',
      MALLOC_MMAP_THRESHOLD_: '131072',
      JE_MALLOC_CONF: 'percpu_arena:disabled,narenas:1',
      NODE_COMPILE_CACHE: '/opt/plumb/node_modules/.cache/plumb-compile',
    });
  });

  it('leaves what the operator set, an empty value included, and a disabled compile cache', () => {
    expect(startEnvironment({ MALLOC_ARENA_MAX: '4', MALLOC_TRIM_THRESHOLD_: '', JE_MALLOC_CONF: '', NODE_COMPILE_CACHE: '' })).toEqual({});
    expect(startEnvironment({ MALLOC_ARENA_MAX: '2', JE_MALLOC_CONF: 'narenas:2', NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual({ MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' });
    const thresholdsSet = { MALLOC_ARENA_MAX: '1', JE_MALLOC_CONF: '', NODE_COMPILE_CACHE: '' };
    expect(startEnvironment({ ...thresholdsSet, MALLOC_TRIM_THRESHOLD_: '1048576' })).toEqual({});
    expect(startEnvironment({ ...thresholdsSet, MALLOC_MMAP_THRESHOLD_: '' })).toEqual({});
    expect(startEnvironment({ ...thresholdsSet, GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=65536' })).toEqual({});
  });

  it('adds nothing once the process runs with it (no second restart)', () => {
    const env = { PATH: '/usr/bin' };
    expect(startEnvironment({ ...env, ...startEnvironment(env) })).toEqual({});
  });
});
