// A value at hand, or the promise of one that had to be fetched. The lookups of an ingest hit (its
// site, the site's hostnames, the day's salt) are answered from memory for nearly every hit, and an
// `await` costs a microtask and its allocations even for a value that is there: the hit's path
// awaits only a promise (`value instanceof Promise ? await value : value`).
export type Eventually<T> = T | Promise<T>;
