// Leader election over a Redis lease (PLUMB_REDIS_URL): one key holds `<nodeId>|<epoch>` with a
// TTL; the holder renews it every third of the lease, every other node retries taking it. The epoch
// counter only ever grows, so a holder's epoch fences out writes from any earlier holder.
import { Redis } from 'ioredis';
import type { Log } from '../../lib/log.ts';
import { createLeadershipListeners, type LeaderElector, type LeadershipState } from './elector.ts';

export interface RedisElectorOptions {
  redisUrl: string;
  nodeId: string;
  /** Lease TTL in Redis; renewal and retries run every third of it. */
  leaseMs: number;
  /** Lease key; the epoch counter lives at `<key>:epoch`. Default 'plumb:leader'. */
  key?: string;
  log: Log;
  /** Monotonic clock in ms (default performance.now); injectable so tests can jump time. */
  now?: () => number;
  /**
   * The highest epoch the fenced resource has seen (leader_epoch in PostgreSQL). New epochs start
   * above it, so a Redis that lost its data (restarted without persistence) cannot hand out epochs
   * the resource would refuse. While it cannot be read, this node does not campaign.
   */
  epochFloor?: () => Promise<number | null>;
}

export interface RedisLeaderElector extends LeaderElector {
  readonly kind: 'redis';
}

// KEYS[1] lease, KEYS[2] epoch counter; ARGV[1] node id, ARGV[2] lease ms, ARGV[3] epoch floor.
// Taking the lease and raising the counter happen in one script so no holder can ever share or
// reuse an epoch. On a miss it reports the current holder and its TTL, so followers learn who leads
// in the same round trip.
const ACQUIRE = `
local epoch = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(ARGV[3])) + 1
local value = ARGV[1] .. '|' .. epoch
if redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[2]) then
  redis.call('SET', KEYS[2], epoch)
  return {epoch, value}
end
return {0, redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
`;

// Compare-and-extend: only the exact value we set (node AND epoch) may be extended.
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;

// Compare-and-delete: never removes a lease another node (or a later term of ours) now holds.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

type AcquireReply = [number, string | null, number?];

/** The node id part of a lease value; ids may contain '|', the epoch never does. */
function holderOf(value: string | null): string | null {
  if (value === null) return null;
  const bar = value.lastIndexOf('|');
  return bar > 0 ? value.slice(0, bar) : value;
}

export function createRedisElector(options: RedisElectorOptions): RedisLeaderElector {
  const { nodeId, leaseMs, log } = options;
  const key = options.key ?? 'plumb:leader';
  const epochKey = `${key}:epoch`;
  const now = options.now ?? (() => performance.now());
  const intervalMs = Math.max(1, Math.floor(leaseMs / 3));
  // We count the lease from the moment a renewal was SENT (Redis starts the new TTL no earlier),
  // and give up a fifth of it as margin for clock-rate drift between this host and Redis and for
  // timer lateness. A leader therefore always steps down before Redis could expire its key.
  const marginMs = Math.floor(leaseMs / 5);
  const listeners = createLeadershipListeners(log);

  const redis = new Redis(options.redisUrl, {
    lazyConnect: true,
    // Fail fast instead of queueing: a renewal that waits for a reconnect is a renewal too late.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Well under the renewal interval, so a hung renewal is noticed before the next one is due.
    commandTimeout: Math.max(1, Math.floor(intervalMs / 2)),
    connectTimeout: Math.min(Math.max(leaseMs, 1000), 10_000),
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 6), 2000),
    // ioredis holds a timer this long when disconnecting an already-broken socket; keep stop() from
    // pinning the event loop for the 2 s default after Redis was unreachable.
    disconnectTimeout: Math.min(intervalMs, 1000),
  });
  let lastError = '';
  redis.on('error', (err: Error) => {
    // ioredis reconnects on its own; repeats of one failure go to debug so an outage can't flood logs.
    if (err.message !== lastError) log.warn({ err, key, nodeId }, 'leader election: Redis error');
    else log.debug({ err, key, nodeId }, 'leader election: Redis error (repeated)');
    lastError = err.message;
  });
  redis.on('ready', () => {
    if (lastError) log.info({ key, nodeId }, 'leader election: Redis reachable again');
    lastError = '';
  });

  let leader = false;
  let epoch: number | null = null;
  /** Our lease value while leading; doubles as the term token that stale replies are checked against. */
  let value: string | null = null;
  /** Monotonic ms after which the lease may have lapsed in Redis. */
  let validUntil = 0;
  let leaderNodeId: string | null = null;
  let leaseExpiresAt: number | null = null;
  let started = false;
  let campaigning = false;
  let stopping: Promise<void> | null = null;
  let inFlight: Promise<void> | null = null;
  let tickTimer: ReturnType<typeof setTimeout> | undefined;
  let guardTimer: ReturnType<typeof setTimeout> | undefined;

  const snapshot = (): LeadershipState => ({ leader, epoch, nodeId, leaderNodeId, leaseExpiresAt });

  function becomeLeader(newEpoch: number, newValue: string, sentAt: number, wallSentAt: number) {
    leader = true;
    epoch = newEpoch;
    value = newValue;
    validUntil = sentAt + leaseMs - marginMs;
    leaderNodeId = nodeId;
    leaseExpiresAt = wallSentAt + leaseMs;
    armGuard();
    log.info({ nodeId, epoch, key }, 'leader election: became leader');
    listeners.emit(snapshot());
  }

  function stepDown(reason: string, err?: unknown, planned = false) {
    if (!leader) return;
    const lostEpoch = epoch;
    leader = false;
    epoch = null;
    value = null;
    // Unknown until the next read of the key.
    leaderNodeId = null;
    leaseExpiresAt = null;
    clearTimeout(guardTimer);
    const fields = { nodeId, epoch: lostEpoch, key, reason, err };
    if (planned) log.info(fields, 'leader election: stepped down');
    else log.warn(fields, 'leader election: stepped down');
    listeners.emit(snapshot());
  }

  /** Steps down as soon as the lease could have lapsed, whatever Redis said last. */
  function checkLease() {
    if (leader && now() > validUntil) stepDown('last successful renewal is older than the lease minus the safety margin');
  }

  // Fires at the lease deadline even if no renewal tick gets there first (e.g. a renewal still waiting on a stalled link).
  function armGuard() {
    clearTimeout(guardTimer);
    guardTimer = setTimeout(checkLease, Math.max(0, validUntil - now()) + 1);
    guardTimer.unref();
  }

  async function acquire() {
    let floor = 0;
    if (options.epochFloor) {
      try {
        floor = (await options.epochFloor()) ?? 0;
      } catch (err) {
        log.debug({ err, key, nodeId }, 'leader election: epoch floor unreadable; not campaigning this round');
        return;
      }
    }
    const sentAt = now();
    const wallSentAt = Date.now();
    let reply: AcquireReply;
    try {
      reply = (await redis.eval(ACQUIRE, 2, key, epochKey, nodeId, String(leaseMs), String(floor))) as AcquireReply;
    } catch (err) {
      leaderNodeId = null;
      leaseExpiresAt = null;
      log.debug({ err, key, nodeId }, 'leader election: acquisition attempt failed');
      return;
    }
    const [newEpoch, holder, pttl] = reply;
    if (newEpoch > 0 && holder !== null) {
      if (now() > sentAt + leaseMs - marginMs) {
        // The answer came back too late to trust the lease it granted: hand it back and try again.
        log.warn({ key, nodeId }, 'leader election: acquisition answered too late; releasing it');
        await release(holder);
        return;
      }
      becomeLeader(newEpoch, holder, sentAt, wallSentAt);
      return;
    }
    leaderNodeId = holderOf(holder);
    leaseExpiresAt = pttl !== undefined && pttl > 0 ? wallSentAt + pttl : null;
  }

  async function renew() {
    const mine = value!;
    const sentAt = now();
    const wallSentAt = Date.now();
    let extended: number;
    try {
      extended = Number(await redis.eval(RENEW, 1, key, mine, String(leaseMs)));
    } catch (err) {
      if (value === mine) stepDown('renewal failed', err);
      return;
    }
    // Stepped down (lease check, stop) while the renewal was in flight: that decision stands.
    if (value !== mine) return;
    if (extended !== 1) return stepDown('lease lost: the key expired or another node holds it');
    const until = sentAt + leaseMs - marginMs;
    if (now() > until) return stepDown('renewal answered too late to trust the lease');
    validUntil = until;
    leaseExpiresAt = wallSentAt + leaseMs;
    armGuard();
  }

  async function release(mine: string) {
    try {
      await redis.eval(RELEASE, 1, key, mine);
    } catch (err) {
      log.warn({ err, key, nodeId }, 'leader election: could not release the lease; it lapses after its TTL');
    }
  }

  async function tick() {
    checkLease();
    if (leader) await renew();
    else await acquire();
  }

  function runTick(): Promise<void> {
    const startedAt = performance.now();
    const run = tick()
      .catch((err: unknown) => log.error({ err, key, nodeId }, 'leader election: tick failed'))
      .finally(() => {
        inFlight = null;
        // Keep the cadence from tick start to tick start, so a slow round trip doesn't delay renewal.
        if (campaigning) schedule(Math.max(0, intervalMs - (performance.now() - startedAt)));
      });
    inFlight = run;
    return run;
  }

  function schedule(delayMs: number) {
    clearTimeout(tickTimer);
    tickTimer = setTimeout(() => void runTick(), delayMs);
    tickTimer.unref();
  }

  return {
    kind: 'redis',

    async start() {
      if (started || stopping) return;
      started = true;
      campaigning = true;
      try {
        await redis.connect();
      } catch (err) {
        // Not fatal: ioredis keeps reconnecting with backoff and every tick tries again.
        if (!campaigning) return; // stop() closed the connection while it was opening
        log.warn({ err, key, nodeId }, 'leader election: Redis unreachable at start; following until it is');
      }
      if (campaigning) await runTick();
    },

    stop() {
      stopping ??= (async () => {
        campaigning = false;
        clearTimeout(tickTimer);
        if (inFlight) await inFlight;
        clearTimeout(guardTimer);
        const mine = value;
        // Announce first so leader-only work winds down before another node can take the lease.
        stepDown('stopping', undefined, true);
        if (mine !== null && redis.status === 'ready') await release(mine);
        if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
        else redis.disconnect();
      })();
      return stopping;
    },

    state() {
      checkLease();
      return snapshot();
    },

    isLeader() {
      checkLease();
      return leader;
    },

    onChange: (listener) => listeners.add(listener),
  };
}
