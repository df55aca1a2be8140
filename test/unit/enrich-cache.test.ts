import { describe, expect, it } from '@jest/globals';
import { BoundedCache } from '../../lib/ingest/enrich/cache.ts';

describe('BoundedCache', () => {
  it('keeps at most max entries, dropping the least recently inserted', () => {
    const cache = new BoundedCache<number>(3);
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) cache.set(key, i);
    expect(cache.size).toBe(3);
    expect([cache.get('a'), cache.get('b'), cache.get('d')]).toEqual([undefined, 1, 3]);
  });

  it('keeps a key that is read often while newer keys push older ones out', () => {
    const cache = new BoundedCache<string>(4);
    cache.set('hot', 'kept');
    for (let i = 0; i < 20; i++) {
      cache.set(`cold-${i}`, 'x');
      expect(cache.get('hot')).toBe('kept');
    }
    expect(cache.size).toBe(4);
    expect(cache.get('cold-0')).toBeUndefined();
  });

  it('answers the value set last for a key', () => {
    const cache = new BoundedCache<number>(2);
    cache.set('a', 1);
    cache.set('a', 2);
    expect([cache.get('a'), cache.size]).toEqual([2, 1]);
  });

  it('never keeps a key longer than its limit', () => {
    const cache = new BoundedCache<number>(2, 4);
    cache.set('abcd', 1);
    cache.set('abcde', 2);
    expect([cache.get('abcd'), cache.get('abcde'), cache.size]).toEqual([1, undefined, 1]);
  });

  it('makes an answer once for a key it keeps, and every time for a key too long to keep', () => {
    const cache = new BoundedCache<string>(2, 4);
    const made: string[] = [];
    const make = (key: string) => {
      made.push(key);
      return key.toUpperCase();
    };
    expect([cache.getOrMake('ab', make), cache.getOrMake('ab', make), cache.getOrMake('abcde', make), cache.getOrMake('abcde', make)]).toEqual(['AB', 'AB', 'ABCDE', 'ABCDE']);
    expect(made).toEqual(['ab', 'abcde', 'abcde']);
  });
});
