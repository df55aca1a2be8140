// A visit states worker that exits at once the first time one starts in this process (a marker
// file named after the process, failingVisitThreadMarker(), records that it did), and is the real
// worker after that: a worker that dies.
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

/** The marker of this process's first start: remove it to have the next worker die again. */
export const failingVisitThreadMarker = () => join(tmpdir(), `plumb-failing-visit-thread-${process.pid}`);

export const FAILING_VISIT_THREAD = new URL(import.meta.url);

if (!isMainThread) {
  const marker = failingVisitThreadMarker();
  if (!existsSync(marker)) {
    writeFileSync(marker, 'exited');
    process.exit(3);
  }
  await import('../../lib/ingest/visit-states-thread.ts');
}
