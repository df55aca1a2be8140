// One HTTP/1.1 connection driven byte by byte: requests go out exactly as written (malformed ones
// included, which fetch would never send), and answers are read off it in order.
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Names lowercased, in the order sent. */
  headers: [string, string][];
  body: string;
  /** The answer as sent, its Date header's value replaced (it is the only one that changes by itself). */
  text: string;
}

export class RawConnection {
  readonly socket: Socket;
  received = Buffer.alloc(0);
  closed = false;
  private wake: (() => void) | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  send(bytes: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(bytes, (err) => (err ? reject(err) : resolve())));
  }

  /** The next answer, waiting up to `timeoutMs` for it; undefined if the connection closed first. */
  async answer(timeoutMs = 10_000): Promise<RawAnswer | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = takeAnswer(this.received);
      if (parsed) {
        this.received = this.received.subarray(parsed.length);
        return parsed.answer;
      }
      if (this.closed) return undefined;
      if (Date.now() > deadline) throw new Error(`no whole answer within ${timeoutMs} ms; received ${JSON.stringify(this.received.toString('latin1'))}`);
      await this.changed(deadline - Date.now());
    }
  }

  /** Every answer until the connection closes or stays quiet for `quietMs`. */
  async answers(quietMs = 400): Promise<RawAnswer[]> {
    const all: RawAnswer[] = [];
    for (;;) {
      const parsed = takeAnswer(this.received);
      if (parsed) {
        this.received = this.received.subarray(parsed.length);
        all.push(parsed.answer);
        continue;
      }
      if (this.closed) return all;
      if (!(await this.changed(quietMs))) return all;
    }
  }

  /** Whether the server closed the connection within `ms`. */
  async closesWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await this.changed(deadline - Date.now());
    return this.closed;
  }

  /** Ends what this side sends (a half-close); the server may still answer. */
  finish() {
    this.socket.end();
  }

  close() {
    this.socket.destroy();
  }

  /** Resolves true when something arrives or the connection closes, false after `ms` of nothing. */
  private changed(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve(false);
      }, Math.max(ms, 0));
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(true);
      };
    });
  }
}

/** One answer framed by its Content-Length (none: no body), and the bytes it took. */
function takeAnswer(bytes: Buffer): { answer: RawAnswer; length: number } | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const [statusLine, ...lines] = bytes.toString('latin1', 0, headEnd).split('\r\n');
  const headers = lines.map((line): [string, string] => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
  });
  const declared = headers.find(([name]) => name === 'content-length');
  const bodyLength = declared ? Number(declared[1]) : 0;
  const length = headEnd + 4 + bodyLength;
  if (bytes.length < length) return undefined;
  const text = bytes.toString('utf8', 0, length).replace(/^Date: .*$/m, 'Date: <date>');
  return { answer: { status: Number(statusLine.split(' ')[1]), headers, body: bytes.toString('utf8', headEnd + 4, length), text }, length };
}

/** A request's bytes: its head lines joined as HTTP joins them, then the body. */
export function rawRequest(lines: string[], body = ''): string {
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
