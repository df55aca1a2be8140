// The ingest journal under kill -9: a child process works a journal with fsync on and is killed
// mid-flight; reopening must give back every acknowledged record exactly once.
import { afterEach, describe, expect, it } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJournal } from '../../lib/ingest/journal.ts';
import { silentLog } from '../../lib/log.ts';

const node = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const childScript = new URL('../support/journal-crash-child.ts', import.meta.url).pathname;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** Starts the child; `lines` holds its complete stdout lines (a line cut by the kill is not one). */
async function startChild(mode: string) {
  const root = await mkdtemp(join(tmpdir(), 'plumb-journal-crash-'));
  dirs.push(root);
  const dir = join(root, 'journal');
  const child = spawn(node, [childScript, dir, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const lines: string[] = [];
  let partial = '';
  const waiters: { prefix: string; resolve(line: string): void }[] = [];
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      for (const w of waiters.filter((w) => line.startsWith(w.prefix))) w.resolve(line);
    }
  });
  // 'close', not 'exit': only then has every line the child wrote been read from the pipe.
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  return {
    dir,
    lines,
    lineStarting: (prefix: string) => new Promise<string>((resolve) => waiters.push({ prefix, resolve })),
    kill: async () => {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ingest journal under SIGKILL', () => {
  it('gives back every number whose append resolved, exactly once, with no gap before the last one', async () => {
    const child = await startChild('append');
    await child.lineStarting('ready');
    await sleep(1000);
    expect(await child.kill()).toBe('SIGKILL');
    const printed = child.lines.filter((l) => l.startsWith('a ')).map((l) => Number(l.slice(2)));
    expect(printed.length).toBeGreaterThan(1000);
    const lastPrinted = Math.max(...printed);

    const journal = await openJournal<{ n: number }>({ dir: child.dir, log: silentLog });
    const replayed: number[] = [];
    for (let batch = await journal.next(10_000); batch; batch = await journal.next(10_000)) {
      replayed.push(...batch.records.map((r) => r.n));
      await batch.ack();
    }
    await journal.close();
    // Every number up to the last printed one, once and in order; beyond it only appends that were
    // on disk but not yet confirmed when the kill came.
    expect(replayed.slice(0, lastPrinted + 1)).toEqual(Array.from({ length: lastPrinted + 1 }, (_, i) => i));
    expect(new Set(replayed).size).toBe(replayed.length);
    expect(replayed.slice(lastPrinted + 1).every((n, i, rest) => n > lastPrinted && (i === 0 || n > rest[i - 1]))).toBe(true);
  });

  it('replays the batch a killed writer had inserted but not acknowledged, with the same token', async () => {
    const child = await startChild('take');
    const taken = await child.lineStarting('t ');
    await child.kill();
    const [, token, records] = taken.split(' ');
    expect(JSON.parse(records)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);

    const journal = await openJournal<{ n: number }>({ dir: child.dir, log: silentLog });
    const again = await journal.next(100);
    expect(again?.token).toBe(token);
    expect(again?.records).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    await again?.ack();
    expect((await journal.next(100))?.records).toEqual([{ n: 5 }, { n: 6 }]);
    await journal.close();
  });

  it('with a writer inserting and acknowledging meanwhile, stores every acknowledged number exactly once when inserts are deduplicated by token', async () => {
    const child = await startChild('append-and-write');
    await child.lineStarting('ready');
    await sleep(1000);
    await child.kill();
    const printed = child.lines.filter((l) => l.startsWith('a ')).map((l) => Number(l.slice(2)));
    // The "analytics store": one entry per token, as ClickHouse drops a repeated insert_deduplication_token.
    const store = new Map<string, number[]>();
    const insert = (token: string, numbers: number[]) => {
      if (!store.has(token)) store.set(token, numbers);
    };
    for (const line of child.lines.filter((l) => l.startsWith('i '))) {
      const [, token, numbers] = line.split(' ');
      insert(token, numbers.split(',').map(Number));
    }
    expect(store.size).toBeGreaterThan(10);

    const journal = await openJournal<{ n: number }>({ dir: child.dir, log: silentLog });
    for (let batch = await journal.next(500); batch; batch = await journal.next(500)) {
      insert(batch.token, batch.records.map((r) => r.n));
      await batch.ack();
    }
    await journal.close();
    const stored = [...store.values()].flat().sort((a, b) => a - b);
    expect(new Set(stored).size).toBe(stored.length); // nothing counted twice
    const lastPrinted = Math.max(...printed);
    expect(stored.slice(0, lastPrinted + 1)).toEqual(Array.from({ length: lastPrinted + 1 }, (_, i) => i)); // nothing acknowledged lost
  });
});
