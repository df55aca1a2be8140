// The cookieless visitor id: a keyed hash of (site, IP, User-Agent) under the day's secret salt.
// Without the salt the id cannot be linked back to an IP, and once the salt is deleted (after two
// days) not even Plumb can recompute it, so ids of different days never join up.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { BoundedCache } from './cache.ts';

/** Addresses whose last visitor's id is remembered, per salt: a visitor's next hits skip the HMAC. */
export const VISITOR_ID_CACHE_SIZE = 10_000;

/** The last visitor seen at an address: what its id was made from, and the id. */
interface KnownVisitor {
  siteId: string;
  userAgent: string;
  id: string;
}

/**
 * HMAC keys made from salts. Importing raw bytes as a key costs several times the hash itself, and
 * a day has one salt, so the key is made once: by salt object (the salt ring hands out the same
 * Uint8Array all day, never changed in place) and, for callers that copy it, by comparing with
 * the last salt's bytes.
 */
const keys = new WeakMap<Uint8Array, KeyObject>();
/**
 * The last visitor of each address, one cache per key, so an id is only ever answered under the
 * salt it was made with, and goes when the salt's key is dropped. Held in memory only, like the
 * running visits. Keyed by the address alone: the site and user agent are compared with the
 * visitor found there, where a key joining all three would be a new string, copied and hashed at
 * every hit (the user agent's hash is known by then, from the bot check's lookup). Visitors who
 * share an address and take turns (an office, a carrier's NAT) cost an HMAC at each turn.
 */
const visitors = new WeakMap<KeyObject, BoundedCache<KnownVisitor>>();
let lastSalt: Uint8Array | null = null;
let lastKey: KeyObject | null = null;

function keyOf(salt: Uint8Array): KeyObject {
  let key = keys.get(salt);
  if (key !== undefined) return key;
  if (lastSalt !== null && lastKey !== null && Buffer.compare(lastSalt, salt) === 0) key = lastKey;
  else {
    key = createSecretKey(salt);
    lastSalt = Uint8Array.from(salt);
    lastKey = key;
  }
  keys.set(salt, key);
  return key;
}

/**
 * The visitor id as an unsigned 64-bit integer in decimal (how a ClickHouse UInt64 travels in
 * JSON without losing precision): the first 8 bytes, big-endian, of HMAC-SHA256 keyed by `salt`
 * over site, IP and UA. A NUL separates the fields so ("a", "bc") and ("ab", "c") differ.
 */
export function visitorHash(salt: Uint8Array, siteId: string, ip: string, userAgent: string): string {
  const key = keyOf(salt);
  let cache = visitors.get(key);
  if (cache === undefined) {
    cache = new BoundedCache(VISITOR_ID_CACHE_SIZE);
    visitors.set(key, cache);
  }
  const known = cache.get(ip);
  if (known !== undefined && known.siteId === siteId && known.userAgent === userAgent) return known.id;
  const id = createHmac('sha256', key).update(`${siteId}\0${ip}\0${userAgent}`).digest().readBigUInt64BE(0).toString();
  cache.set(ip, { siteId, userAgent, id });
  return id;
}
