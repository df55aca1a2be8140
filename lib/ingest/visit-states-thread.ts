// The worker thread the writer's visit states are derived on (started by ./visit-states-worker.ts):
// it remembers the visits, reads each batch's lines (from the journal's line ring, which it shares,
// or as sent), folds them, and answers the visits rows. A read of the store is asked of the main
// thread, which holds the store's connection.
import { parentPort, workerData } from 'node:worker_threads';
import { releaseMemoryWhenQuiet } from '../memory-release.ts';
import { LineRing } from './line-ring.ts';
import { rowOfLine } from './row-layouts.ts';
import { createVisitStateDeriver, type DerivedVisits, type VisitSource } from './visit-states.ts';
import { type FromThread, LINE_AS_TEXT, ROW_AS_OBJECT, type SourceBatch, SOURCE_TABLES, type ThreadData, type ToThread } from './visit-states-worker.ts';

const port = parentPort!;
const data = workerData as ThreadData;
const ring = data.ring ? new LineRing(data.ring) : undefined;
const deriver = createVisitStateDeriver({ idleMs: data.idleMs, maxVisits: data.maxVisits });
/** Derived batches not yet kept or forgotten, by id. */
const unsettled = new Map<number, DerivedVisits>();
/** Reads of the store asked of the main thread, by the id of the batch waiting for them. */
const reads = new Map<number, { resolve(rows: Map<string, Record<string, unknown>>): void; reject(err: Error): void }>();

const send = (message: FromThread) => port.postMessage(message);
releaseMemoryWhenQuiet((release) => send({ type: 'released', ...release }));

function sourcesOf(batch: SourceBatch): VisitSource[] {
  const sources: VisitSource[] = [];
  let text = 0;
  let row = 0;
  for (let i = 0; i < batch.tables.length; i++) {
    const table = SOURCE_TABLES[batch.tables[i]];
    // A batch's layout 0 is a line without one.
    const layout = batch.layouts[i] === 0 ? undefined : batch.layouts[i];
    const position = batch.positions[i];
    if (position === ROW_AS_OBJECT) {
      sources.push({ table, row: batch.rows[row++] });
      continue;
    }
    if (position !== LINE_AS_TEXT && ring === undefined) throw new Error('a line in the ring was sent to a worker without the ring');
    const line = position === LINE_AS_TEXT ? batch.texts[text++] : undefined;
    const length = batch.lengths[i];
    sources.push({ table, readRow: (scratch) => rowOfLine(table, layout, line ?? ring!.text(position, length), scratch) });
  }
  return sources;
}

async function derive(id: number, batch: SourceBatch): Promise<void> {
  try {
    const derived = await deriver.derive(sourcesOf(batch), (visits) => {
      send({ type: 'read', id, visits: [...visits] });
      return new Promise((resolve, reject) => reads.set(id, { resolve, reject }));
    });
    unsettled.set(id, derived);
    send({ type: 'derived', id, lines: derived.lines });
  } catch (err) {
    send({ type: 'failed', id, error: (err as Error).message });
  }
}

/**
 * A batch is kept or forgotten once its fate is known. The writer settles batches in the order it
 * derived them, so any derived before this one and still unsettled belongs to a write that failed
 * (and was derived again since): it is dropped.
 */
function settle(id: number, kept: boolean): void {
  const derived = unsettled.get(id);
  for (const earlier of unsettled.keys()) {
    if (earlier > id) break;
    unsettled.delete(earlier);
  }
  if (kept) derived?.keep();
  else derived?.forget();
}

port.on('message', (message: ToThread) => {
  switch (message.type) {
    case 'derive':
      void derive(message.id, message.batch);
      return;
    case 'stored': {
      const read = reads.get(message.id);
      reads.delete(message.id);
      if (message.rows) read?.resolve(message.rows);
      else read?.reject(new Error(message.error ?? 'the store could not be read'));
      return;
    }
    case 'keep':
    case 'forget':
      settle(message.id, message.type === 'keep');
      return;
    case 'size':
      send({ type: 'size', id: message.id, size: deriver.size() });
  }
});
