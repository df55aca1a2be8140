// Fencing for leader-only side effects. A leader's epoch is checked at the resource: the
// metadata row `leader_epoch`, in the same transaction as the side effect. Once a newer leader has
// claimed the row, everything a deposed leader still tries (it may not know yet that its lease
// lapsed: a long GC pause, a partition) is refused by PostgreSQL itself.
//
// For code that runs leader-only work (leader jobs get their epoch in start(epoch)):
//   await runtime.fence.run(epoch, async (tx) => { … writes through tx … });
// or, inside a transaction of your own, `await assertLeaderEpoch(tx, epoch, nodeId)` first.
import type { MetadataQueryable, MetadataStore } from '../lib/stores/metadata/index.ts';

const SCOPE = 'leader';

/** A newer leader has claimed the metadata database; this node's epoch may no longer act. */
export class FencedError extends Error {
  readonly epoch: number;
  readonly current: number | null;
  constructor(epoch: number, current: number | null) {
    super(`leader epoch ${epoch} is fenced out: the metadata database has been claimed by epoch ${current}`);
    this.name = 'FencedError';
    this.epoch = epoch;
    this.current = current;
  }
}

/**
 * Inside a transaction: raises `leader_epoch` to `epoch` (or confirms it), holding the row's lock
 * until the transaction ends, so no newer leader can claim it between this check and the commit.
 * Throws FencedError when a newer epoch holds the row; the caller's transaction then rolls back.
 */
export async function assertLeaderEpoch(tx: MetadataQueryable, epoch: number, nodeId: string): Promise<void> {
  const { rows } = await tx.query<{ epoch: number }>(
    `INSERT INTO leader_epoch (scope, epoch, node_id) VALUES ($1, $2, $3)
     ON CONFLICT (scope) DO UPDATE SET epoch = EXCLUDED.epoch, node_id = EXCLUDED.node_id, claimed_at = now()
       WHERE leader_epoch.epoch <= EXCLUDED.epoch
     RETURNING epoch`,
    [SCOPE, epoch, nodeId],
  );
  if (rows.length > 0) return;
  const current = await tx.query<{ epoch: number }>('SELECT epoch FROM leader_epoch WHERE scope = $1', [SCOPE]);
  throw new FencedError(epoch, current.rows[0]?.epoch ?? null);
}

/** The highest epoch that has claimed the database, or null before any leader did. */
export async function currentLeaderEpoch(db: MetadataQueryable): Promise<number | null> {
  const { rows } = await db.query<{ epoch: number }>('SELECT epoch FROM leader_epoch WHERE scope = $1', [SCOPE]);
  return rows[0]?.epoch ?? null;
}

export interface LeaderFence {
  /** Runs fn in one metadata transaction after assertLeaderEpoch; rejects with FencedError when deposed. */
  run<T>(epoch: number, fn: (tx: MetadataQueryable) => Promise<T>): Promise<T>;
}

/**
 * `enforced` is false for a single node (local elector): it holds the data-dir lock, there is no
 * one to fence against, and its epochs restart at 1 with every process, so a row left by an
 * earlier cluster on the same database would otherwise refuse it forever.
 */
export function createLeaderFence(metadata: () => MetadataStore, nodeId: string, enforced: boolean): LeaderFence {
  return {
    async run(epoch, fn) {
      return metadata().transaction(async (tx) => {
        if (enforced) await assertLeaderEpoch(tx, epoch, nodeId);
        return fn(tx);
      });
    },
  };
}
