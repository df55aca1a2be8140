// Child process for test/integration/journal-crash.test.ts: works an ingest journal (fsync on) until
// the test kills it with SIGKILL, printing one line per thing that has durably happened.
// Usage: node journal-crash-child.ts <dir> append|append-and-write|take
import { writeSync } from 'node:fs';
import { openJournal } from '../../lib/ingest/journal.ts';
import type { Log } from '../../lib/log.ts';

const [dir, mode] = process.argv.slice(2);
const quiet = () => {};
const log: Log = { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet };
/**
 * Writes straight to fd 1, never through process.stdout: that stream buffers in memory when the
 * pipe is full, and a line still in that buffer would die with the process although the child went
 * on as if it had been said (the test would then see a batch acknowledged but never "inserted").
 */
function say(line: string): void {
  const bytes = Buffer.from(`${line}\n`);
  for (let written = 0; written < bytes.length; ) {
    try {
      written += writeSync(1, bytes, written);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err; // a full non-blocking pipe: retry
    }
  }
}
const journal = await openJournal<{ n: number }>({ dir, log });

/** Concurrent callers numbering their records in call order; "a <n>" once n's append resolved. */
function appendForever(callers: number): Promise<unknown> {
  let n = 0;
  return Promise.all(
    Array.from({ length: callers }, async () => {
      for (;;) {
        const mine = n++;
        await journal.append([{ n: mine }]);
        say(`a ${mine}`);
      }
    }),
  );
}

/** The analytics writer: "i <token> <numbers>" once the batch is "inserted", then ack. */
async function writeForever(): Promise<void> {
  for (;;) {
    const batch = await journal.next(500);
    if (!batch) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      continue;
    }
    say(`i ${batch.token} ${batch.records.map((r) => r.n).join(',')}`);
    await batch.ack();
  }
}

if (mode === 'append') {
  say('ready');
  await appendForever(16);
} else if (mode === 'append-and-write') {
  say('ready');
  await Promise.all([appendForever(16), writeForever()]);
} else if (mode === 'take') {
  await journal.append([1, 2, 3, 4, 5, 6].map((n) => ({ n })));
  const batch = await journal.next(4);
  say(`t ${batch?.token} ${JSON.stringify(batch?.records)}`);
  setInterval(() => {}, 60_000); // "inserted" but never acknowledged: wait for the kill
} else {
  throw new Error(`unknown mode ${mode}`);
}
