// The one bounded cache of the ingest path: enrichment answers that repeat across requests.
/**
 * A Map kept in insertion order, evicting the oldest entry past `max`. A hit re-inserts its key
 * once it has fallen into the older half, so hot keys (the few UAs most visitors share) stay,
 * without moving the key on every hit (a delete and an insert, on every ingest request).
 * Shared by the ingest caches (user agents, bots, AI agents, visitor ids, Origin hostnames, page and referrer URLs).
 */
export class BoundedCache<V> {
  readonly max: number;
  /** Longer keys are never kept: what the cache can hold stays small whatever clients send. */
  readonly maxKeyLength: number;
  private readonly map = new Map<string, { value: V; inserted: number }>();
  private inserts = 0;

  constructor(max: number, maxKeyLength = Number.POSITIVE_INFINITY) {
    this.max = max;
    this.maxKeyLength = maxKeyLength;
  }

  get(key: string): V | undefined {
    if (key.length > this.maxKeyLength) return undefined;
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    if (this.inserts - entry.inserted > this.max / 2) {
      this.map.delete(key);
      entry.inserted = this.inserts++;
      this.map.set(key, entry);
    }
    return entry.value;
  }

  /** The answer kept for `key`, else `make`'s, kept. Pass a function made once, not a closure per call. */
  getOrMake(key: string, make: (key: string) => V): V {
    let value = this.get(key);
    if (value === undefined) {
      value = make(key);
      this.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    if (key.length > this.maxKeyLength) return;
    if (this.map.size >= this.max && !this.map.has(key)) this.map.delete(this.map.keys().next().value!);
    this.map.delete(key);
    this.map.set(key, { value, inserted: this.inserts++ });
  }

  get size(): number {
    return this.map.size;
  }
}
