// The leader's hourly ingest sweep: salts older than yesterday, and idempotency keys older than a
// day. Once at once (leadership starts after the stores are ready), then hourly. Fenced: a deposed
// leader's sweep is refused by the metadata database.
import type { LeaderJob } from '../../cluster/leader-jobs.ts';
import type { Runtime } from '../runtime.ts';
import { pruneIdempotencyKeys } from './idempotency.ts';
import { createSaltRing } from './salts.ts';

const PRUNE_MS = 3_600_000;

export function ingestPruneJob(runtime: Pick<Runtime, 'fence' | 'log'>): LeaderJob {
  let timer: NodeJS.Timeout | undefined;
  return {
    start(epoch) {
      const prune = () =>
        runtime.fence
          .run(epoch, async (tx) => {
            await createSaltRing(() => tx).prune();
            await pruneIdempotencyKeys(tx);
          })
          .catch((err: Error) => runtime.log.warn({ err: err.message }, 'ingest pruning failed'));
      timer = setInterval(prune, PRUNE_MS);
      void prune();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
