// An open-loop load generator for latency at a rate: requests are due at even intervals (one every
// 1/rate s), sent on the first free keep-alive connection, and each one's latency is counted from
// the moment it was due, not from when a connection took it, so time spent queued behind a slow
// answer counts (no coordinated omission). autocannon's rate limit, by contrast, lets each
// connection send its share of a second as fast as it can and then wait for the next second: a
// server at "80%" works at its full rate for four fifths of every second.
//
// Minimal HTTP/1.1 over node:net, one request in flight per connection, answers delimited by
// Content-Length or chunked coding: the generator's own CPU a request stays low.
import { connect, type Socket } from 'node:net';
import { percentile } from './measure.ts';

export interface PacedOptions {
  /** Requests a second, spread evenly. */
  rate: number;
  durationS: number;
  connections: number;
  method: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  body: string;
  /** How long to wait for answers still outstanding once the last request is due. */
  drainMs?: number;
}

export interface PacedResult {
  /** Requests due over the run (all were sent unless connections failed). */
  due: number;
  accepted: number;
  /** Answers other than 2xx, failed connections, and requests left unanswered at the end. */
  other: number;
  /** 2xx answers a second, over the run and its drain. */
  rps: number;
  p50: number;
  p99: number;
  max: number;
}

/** Milliseconds between timer ticks; the requests due meanwhile go out at each tick. */
const TICK_MS = 1;

const HEADER_END = Buffer.from('\r\n\r\n');

interface Connection {
  socket: Socket;
  /** When the request in flight was due (performance.now()), or null when the connection is free. */
  dueAt: number | null;
  pending: Buffer;
}

/**
 * The length of the first complete answer in `data` and its status, or null while it is incomplete.
 * The body is delimited by Content-Length or by chunked transfer coding (a bare `node:http` answer
 * without a body comes chunked); anything else (a body that ends with the connection) is refused.
 */
export function completeAnswer(data: Buffer): { length: number; status: number } | null {
  const headerEnd = data.indexOf(HEADER_END);
  if (headerEnd < 0) return null;
  const head = data.toString('latin1', 0, headerEnd);
  const status = Number(head.slice(9, 12));
  const bodyStart = headerEnd + HEADER_END.length;
  const contentLength = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  if (contentLength) {
    const length = bodyStart + Number(contentLength[1]);
    return data.length >= length ? { length, status } : null;
  }
  if (/\r\ntransfer-encoding:[ \t]*chunked/i.test(head)) {
    const length = chunkedEnd(data, bodyStart);
    return length === null ? null : { length, status };
  }
  throw new Error(`paced load: an answer without Content-Length or chunked coding (${head.split('\r\n', 1)[0]})`);
}

/** Where a chunked body starting at `at` ends (after its last chunk and the empty trailer), or null if it has not yet. */
function chunkedEnd(data: Buffer, at: number): number | null {
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = Number.parseInt(data.toString('latin1', at, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error('paced load: a malformed chunk size');
    if (size === 0) {
      // No trailers: the last chunk's line is followed by the empty line that ends the body.
      return data.length >= lineEnd + 4 ? lineEnd + 4 : null;
    }
    at = lineEnd + 2 + size + 2;
    if (data.length < at) return null;
  }
}

export async function pacedLoad(url: string, options: PacedOptions): Promise<PacedResult> {
  const target = new URL(url);
  const bodyBytes = Buffer.from(options.body);
  const headerLines = Object.entries(options.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const request = Buffer.concat([
    Buffer.from(`${options.method} ${options.path} HTTP/1.1\r\nHost: ${target.host}\r\n${headerLines}Content-Length: ${bodyBytes.length}\r\n\r\n`),
    bodyBytes,
  ]);
  const intervalMs = 1000 / options.rate;
  const total = Math.floor(options.rate * options.durationS);
  const latencies = new Float64Array(total);
  let accepted = 0;
  let other = 0;
  // Request i is due at started + i × intervalMs: those from `sent` up to `due` wait for a free connection.
  let due = 0;
  let sent = 0;
  const free: Connection[] = [];
  let started = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));

  const send = (connection: Connection, dueAt: number) => {
    connection.dueAt = dueAt;
    connection.socket.write(request);
  };
  const dispatch = () => {
    while (sent < due && free.length > 0) send(free.pop()!, started + sent++ * intervalMs);
  };
  const settle = () => {
    if (due === total && accepted + other >= total) finish();
  };

  const open = (): Promise<Connection> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: target.hostname, port: Number(target.port), noDelay: true });
      const connection: Connection = { socket, dueAt: null, pending: Buffer.alloc(0) };
      socket.once('connect', () => resolve(connection));
      socket.on('error', reject);
      // A connection that fails or is closed mid-run loses its request in flight; the run goes on without it.
      socket.once('close', () => {
        const at = free.indexOf(connection);
        if (at >= 0) free.splice(at, 1);
        if (connection.dueAt !== null) {
          other++;
          connection.dueAt = null;
          settle();
        }
      });
      socket.on('data', (chunk: Buffer) => {
        connection.pending = connection.pending.length === 0 ? chunk : Buffer.concat([connection.pending, chunk]);
        const answer = completeAnswer(connection.pending);
        if (!answer || connection.dueAt === null) return;
        connection.pending = connection.pending.subarray(answer.length);
        if (answer.status >= 200 && answer.status < 300) latencies[accepted++] = performance.now() - connection.dueAt;
        else other++;
        connection.dueAt = null;
        free.push(connection);
        dispatch();
        settle();
      });
    });

  const connections = await Promise.all(Array.from({ length: options.connections }, open));
  free.push(...connections);
  started = performance.now();
  const ticker = setInterval(() => {
    due = Math.min(total, Math.floor((performance.now() - started) / intervalMs) + 1);
    dispatch();
    if (due === total) {
      clearInterval(ticker);
      settle();
    }
  }, TICK_MS);
  const drainMs = options.drainMs ?? 5_000;
  let deadline: NodeJS.Timeout | undefined;
  await Promise.race([finished, new Promise((resolve) => (deadline = setTimeout(resolve, options.durationS * 1000 + drainMs)))]);
  clearTimeout(deadline);
  clearInterval(ticker);
  const elapsedS = (performance.now() - started) / 1000;
  const unanswered = total - accepted - other;
  const measured = Array.from(latencies.subarray(0, accepted));
  const result: PacedResult = {
    due: total,
    accepted,
    other: other + unanswered,
    rps: accepted / elapsedS,
    p50: measured.length > 0 ? percentile(measured, 50) : Number.NaN,
    p99: measured.length > 0 ? percentile(measured, 99) : Number.NaN,
    max: measured.length > 0 ? measured.reduce((longest, ms) => Math.max(longest, ms), 0) : Number.NaN,
  };
  for (const connection of connections) connection.socket.destroy();
  return result;
}
