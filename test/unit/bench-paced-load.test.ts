// The ingest benchmark's open-loop generator: requests spread evenly over the run, every one
// answered and counted, and latency counted from when a request was due, so a server slower than
// the offered rate shows its queue instead of hiding it.
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completeAnswer, pacedLoad } from '../bench/paced-load.ts';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server answering 202 after `delayMs`; it notes when each request arrived. */
async function serve(delayMs: number): Promise<{ url: string; arrivals: number[] }> {
  const arrivals: number[] = [];
  server = createServer((req, res) => {
    arrivals.push(performance.now());
    req.resume();
    req.on('end', () => {
      // As the durable reference answers: no Content-Length, so node:http sends an empty chunked body.
      const answer = () => {
        res.writeHead(202);
        res.end();
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, arrivals };
}

const INGEST = { method: 'POST', path: '/ingest', headers: { 'Content-Type': 'text/plain' }, body: '{"url":"https://example.com/"}' };

describe('completeAnswer', () => {
  it('waits for the whole head and the body Content-Length announces', () => {
    const answer = Buffer.from('HTTP/1.1 202 Accepted\r\nContent-Length: 2\r\nDate: x\r\n\r\nok');
    expect(completeAnswer(answer.subarray(0, 20))).toBeNull();
    expect(completeAnswer(answer.subarray(0, answer.length - 1))).toBeNull();
    expect(completeAnswer(Buffer.concat([answer, Buffer.from('HTTP/1.1')]))).toEqual({ length: answer.length, status: 202 });
  });

  it('reads a chunked body to its last chunk', () => {
    const answer = Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\na\r\n0123456789\r\n0\r\n\r\n');
    for (let cut = 40; cut < answer.length; cut++) expect(completeAnswer(answer.subarray(0, cut))).toBeNull();
    expect(completeAnswer(answer)).toEqual({ length: answer.length, status: 200 });
    const empty = Buffer.from('HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
    expect(completeAnswer(empty)).toEqual({ length: empty.length, status: 202 });
  });

  it('refuses an answer it cannot delimit', () => {
    expect(() => completeAnswer(Buffer.from('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody'))).toThrow(/without Content-Length or chunked/);
  });
});

describe('pacedLoad', () => {
  it('sends every request due, spread over the run rather than in a burst', async () => {
    const { url, arrivals } = await serve(0);
    const result = await pacedLoad(url, { ...INGEST, rate: 1000, durationS: 1, connections: 10 });
    expect(result).toMatchObject({ due: 1000, accepted: 1000, other: 0 });
    // autocannon's rate limit would send a second's share at once; here no tenth of the run gets half of it.
    const first = arrivals[0];
    const perWindow = new Map<number, number>();
    for (const at of arrivals) perWindow.set(Math.floor((at - first) / 100), (perWindow.get(Math.floor((at - first) / 100)) ?? 0) + 1);
    expect(Math.max(...perWindow.values())).toBeLessThan(500);
    expect(arrivals[arrivals.length - 1] - first).toBeGreaterThan(800);
  });

  it('counts the time a request waits for a connection when the server falls behind the rate', async () => {
    // Two connections at 20 ms an answer carry 100 requests a second; 200 are offered.
    const { url } = await serve(20);
    const result = await pacedLoad(url, { ...INGEST, rate: 200, durationS: 1, connections: 2 });
    expect(result).toMatchObject({ due: 200, accepted: 200, other: 0 });
    // A generator that timed from the send would see ~20 ms; the last requests waited ~1 s for theirs.
    expect(result.p50).toBeGreaterThan(100);
    expect(result.max).toBeGreaterThan(500);
  });

  it('counts the requests a closed connection left unanswered', async () => {
    server = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const result = await pacedLoad(url, { ...INGEST, rate: 100, durationS: 0.2, connections: 2, drainMs: 200 });
    expect(result.accepted).toBe(0);
    expect(result.other).toBe(result.due);
  });
});
