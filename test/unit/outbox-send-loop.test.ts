// The outbox send loop (webhook deliveries, mail) on Jest's clock, against a queue kept in memory
// that behaves as the SQL queues do: claims lease items, outcomes count only for the claim that
// still stands, expired claims go back due now. What the loop must do: send what is queued at
// once when woken and at the next sweep when not, retry when the backoff is due, take back a dead
// node's claim once its lease expires, keep to its concurrency, and leave an empty queue with one
// read a sweep and no write.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { silentLog } from '../../lib/log.ts';
import { createSendLoop, type OutboxQueue, type SendLoop, type SendLoopSettings, type SendOutcome } from '../../lib/outbox/send-loop.ts';

interface Claimed {
  id: string;
  attempts: number;
  token: number;
}

interface Row {
  id: string;
  status: 'pending' | 'retrying' | 'processing' | 'succeeded' | 'failed';
  attempts: number;
  dueAt: number;
  leaseUntil: number;
  token: number;
}

const SETTINGS: SendLoopSettings = { concurrency: 2, leaseSeconds: 10, maxAttempts: 3, retryBaseSeconds: 2, retryMaxSeconds: 60, sweepSeconds: 30, retentionDays: 30 };

/** The queue's rows in memory; every call is recorded by name. */
function memoryQueue() {
  const rows = new Map<string, Row>();
  const calls: string[] = [];
  let tokens = 0;
  let failNextOutlook = false;
  const waiting = (row: Row) => row.status === 'pending' || row.status === 'retrying';
  const queue: OutboxQueue<Claimed, SendOutcome> = {
    async claim(limit, leaseSeconds) {
      calls.push('claim');
      const due = [...rows.values()].filter((row) => waiting(row) && row.dueAt <= Date.now()).sort((a, b) => a.dueAt - b.dueAt);
      return due.slice(0, limit).map((row) => {
        Object.assign(row, { status: 'processing', leaseUntil: Date.now() + leaseSeconds * 1000, token: ++tokens });
        return { id: row.id, attempts: row.attempts, token: row.token };
      });
    },
    async complete(item, outcome) {
      calls.push('complete');
      const row = rows.get(item.id)!;
      if (row.status !== 'processing' || row.token !== item.token) return;
      row.attempts += 1;
      if (outcome.ok) row.status = 'succeeded';
      else if (row.attempts >= outcome.maxAttempts) row.status = 'failed';
      else Object.assign(row, { status: 'retrying', dueAt: Date.now() + outcome.retryInSeconds * 1000 });
    },
    async requeueStalled() {
      calls.push('requeueStalled');
      const stalled = [...rows.values()].filter((row) => row.status === 'processing' && row.leaseUntil < Date.now());
      for (const row of stalled) Object.assign(row, { status: row.attempts === 0 ? 'pending' : 'retrying', dueAt: Date.now() });
      return stalled.length;
    },
    async purge() {
      calls.push('purge');
    },
    async outlook() {
      calls.push('outlook');
      if (failNextOutlook) {
        failNextOutlook = false;
        throw new Error('the metadata store went away');
      }
      const dues = [...rows.values()].filter(waiting).map((row) => row.dueAt);
      return {
        secondsUntilNextDue: dues.length === 0 ? null : Math.max(0, (Math.min(...dues) - Date.now()) / 1000),
        stalledClaims: [...rows.values()].some((row) => row.status === 'processing' && row.leaseUntil < Date.now()),
      };
    },
  };
  return {
    queue,
    rows,
    calls,
    /** Queues an item due `inSeconds` from now. */
    add(id: string, inSeconds = 0) {
      rows.set(id, { id, status: 'pending', attempts: 0, dueAt: Date.now() + inSeconds * 1000, leaseUntil: 0, token: 0 });
    },
    /** An item another node claimed and then died with, its lease running out `inSeconds` from now. */
    addClaimedElsewhere(id: string, inSeconds: number) {
      rows.set(id, { id, status: 'processing', attempts: 0, dueAt: Date.now(), leaseUntil: Date.now() + inSeconds * 1000, token: ++tokens });
    },
    failNextOutlook: () => (failNextOutlook = true),
    /** The calls that write (everything but the outlook), since the list was last cleared. */
    writes: () => calls.filter((call) => call !== 'outlook'),
  };
}

describe('the outbox send loop', () => {
  /** The test's loop, stopped after it. */
  let current: SendLoop | undefined;
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(async () => {
    await current?.stop();
    current = undefined;
    jest.useRealTimers();
  });

  /** A queue in memory and a loop over it whose sends answer as `answer` says; every attempt is recorded. */
  function prepared(answer: (item: Claimed) => Promise<string | null> = async () => null) {
    const memory = memoryQueue();
    const sent: string[] = [];
    const loop = createSendLoop<Claimed, SendOutcome>({
      noun: { one: 'test item', many: 'test items' },
      queue: () => memory.queue,
      async send(item) {
        sent.push(item.id);
        return { error: await answer(item) };
      },
      logFields: (item) => ({ id: item.id }),
      settings: SETTINGS,
      log: silentLog,
    });
    current = loop;
    return { memory, loop, sent };
  }

  it('leaves an empty queue with one read a sweep: no claim, no requeue, no transaction', async () => {
    const { memory, loop } = prepared();
    loop.start(1);
    await jest.advanceTimersByTimeAsync(0);
    // The history is purged when a leader starts, and every ten minutes after.
    expect(memory.calls).toEqual(['outlook', 'purge']);
    memory.calls.length = 0;
    await jest.advanceTimersByTimeAsync(3 * SETTINGS.sweepSeconds * 1000);
    expect(memory.calls).toEqual(['outlook', 'outlook', 'outlook']);
  });

  it('sends what is queued at once when woken', async () => {
    const { memory, loop, sent } = prepared();
    loop.start(1);
    await jest.advanceTimersByTimeAsync(1_000);
    memory.add('a');
    loop.wake();
    await jest.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['a']);
    expect(memory.rows.get('a')!.status).toBe('succeeded');
  });

  it('finds what was queued without a wake (on a node whose event was lost) at the next sweep', async () => {
    const { memory, loop, sent } = prepared();
    loop.start(1);
    await jest.advanceTimersByTimeAsync(1_000);
    memory.add('a');
    await jest.advanceTimersByTimeAsync(SETTINGS.sweepSeconds * 1000 - 1_001);
    expect(sent).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(sent).toEqual(['a']);
  });

  it('sends an item queued for later when it falls due, before the sweep', async () => {
    const { memory, loop, sent } = prepared();
    memory.add('later', 5);
    loop.start(1);
    await jest.advanceTimersByTimeAsync(4_900);
    expect(sent).toEqual([]);
    await jest.advanceTimersByTimeAsync(100);
    expect(sent).toEqual(['later']);
  });

  it('retries a refused attempt when its backoff is due, then records the last refusal as failed', async () => {
    const { memory, loop, sent } = prepared(async () => 'http_status');
    memory.add('a');
    loop.start(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['a']);
    // Backoff 2 s, then 4 s, each up to 20% less: both retries come long before the 30 s sweep.
    await jest.advanceTimersByTimeAsync(2_000);
    expect(sent).toEqual(['a', 'a']);
    await jest.advanceTimersByTimeAsync(4_000);
    expect(sent).toEqual(['a', 'a', 'a']);
    expect(memory.rows.get('a')).toMatchObject({ status: 'failed', attempts: 3 });
    await jest.advanceTimersByTimeAsync(2 * SETTINGS.sweepSeconds * 1000);
    expect(sent).toHaveLength(3);
  });

  it('takes back the claim of a node that died mid-attempt once its lease expires, and sends it again', async () => {
    const { memory, loop, sent } = prepared();
    memory.addClaimedElsewhere('orphan', 10);
    loop.start(1);
    await jest.advanceTimersByTimeAsync(0);
    // Its lease still runs: the node may yet record the outcome.
    expect(memory.writes()).not.toContain('requeueStalled');
    expect(sent).toEqual([]);
    await jest.advanceTimersByTimeAsync(SETTINGS.sweepSeconds * 1000);
    expect(memory.writes()).toContain('requeueStalled');
    expect(sent).toEqual(['orphan']);
    expect(memory.rows.get('orphan')!.status).toBe('succeeded');
  });

  it('keeps to its concurrency and claims the next item as soon as an attempt ends', async () => {
    const answers: (() => void)[] = [];
    const { memory, loop, sent } = prepared(() => new Promise<null>((resolve) => answers.push(() => resolve(null))));
    for (const id of ['a', 'b', 'c']) memory.add(id);
    loop.start(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['a', 'b']);
    answers.shift()!();
    await jest.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['a', 'b', 'c']);
    for (const answer of answers) answer();
    await jest.advanceTimersByTimeAsync(0);
    expect([...memory.rows.values()].map((row) => row.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  it('purges history every ten minutes', async () => {
    const { memory, loop } = prepared();
    loop.start(1);
    await jest.advanceTimersByTimeAsync(20 * 60_000);
    expect(memory.calls.filter((call) => call === 'purge')).toHaveLength(3);
  });

  it('looks again at the next sweep after a look that failed', async () => {
    const { memory, loop, sent } = prepared();
    memory.add('a');
    memory.failNextOutlook();
    loop.start(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([]);
    await jest.advanceTimersByTimeAsync(SETTINGS.sweepSeconds * 1000);
    expect(sent).toEqual(['a']);
  });

  it('sends nothing once stopped', async () => {
    const { memory, loop, sent } = prepared();
    loop.start(1);
    await jest.advanceTimersByTimeAsync(0);
    await loop.stop();
    memory.add('a');
    loop.wake();
    await jest.advanceTimersByTimeAsync(2 * SETTINGS.sweepSeconds * 1000);
    expect(sent).toEqual([]);
    expect(memory.calls).toEqual(['outlook', 'purge']);
  });
});
