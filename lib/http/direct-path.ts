// The direct path: the gateway's HTTP server reads a connection's requests itself while each is a
// tracker request it can answer exactly as Node's server would (lib/http/request-head.ts says
// which), and writes their answers itself. Building Node's request and answer objects, their
// streams and their header checks cost a node's main thread more than the rest of a tracker hit;
// docs/decisions.md ("Tracker requests take a direct path") has the measurements.
//
// At the first request that is anything else, the connection goes to Node's HTTP server with every
// byte read and not yet answered, as if it had just connected (its documented 'connection' event),
// and Node reads it and everything after it: the dashboard, the API, errors of the protocol,
// upgrades, slow bodies. Answers stay in order: a connection is handed over only between answers.
import { type IncomingMessage, maxHeaderSize, type RequestListener, STATUS_CODES, Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type DirectRequest, readRequestHead } from './request-head.ts';

/** What the direct path writes: a status, its headers (name, value, …) and a body. */
export interface DirectAnswer {
  status: number;
  headers: string[];
  body: string;
}

export interface DirectPathOptions {
  /** The largest body a direct path takes; undefined for any path it does not answer. */
  bodyLimitOf(path: string): number | undefined;
  /** Answers one whole request; it never rejects (its errors are answers too). */
  answer(request: DirectRequest, body: Buffer, remoteAddress: string | undefined): Promise<DirectAnswer>;
}

/**
 * The longest head the direct path reads. A tracker request's is well under 1 KiB; a longer one,
 * up to Node's limit (16 KiB unless set otherwise), is Node's to read.
 */
const MAX_DIRECT_HEAD_BYTES = Math.min(8192, maxHeaderSize);
/** How often held connections are checked for Node's keep-alive and header timeouts. */
const SWEEP_MS = 1000;
const REQUEST_TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

/** The gateway's HTTP server: Node's, with tracker connections read by the direct path until they carry anything else. */
export class GatewayServer extends Server {
  direct: DirectConnections | undefined;

  constructor(handle: RequestListener<typeof IncomingMessage, typeof ServerResponse>, direct: DirectPathOptions | undefined) {
    super(handle);
    this.direct = direct ? new DirectConnections(this, direct) : undefined;
  }

  /** Also the direct path's connections that wait for no answer (Node's `close()` calls this). */
  override closeIdleConnections(): void {
    super.closeIdleConnections();
    this.direct?.closeIdle();
  }

  override closeAllConnections(): void {
    super.closeAllConnections();
    this.direct?.closeAll();
  }
}

class DirectConnections {
  readonly server: Server;
  readonly options: DirectPathOptions;
  /** Node's own reader of a new connection, which a handed-over connection goes to. */
  readonly nodeConnection: (socket: Socket) => void;
  readonly open = new Set<DirectConnection>();
  closing = false;
  sweep: NodeJS.Timeout | undefined;

  constructor(server: Server, options: DirectPathOptions) {
    this.server = server;
    this.options = options;
    const [nodeConnection] = server.listeners('connection') as ((socket: Socket) => void)[];
    this.nodeConnection = nodeConnection;
    server.removeListener('connection', nodeConnection);
    server.on('connection', (socket: Socket) => {
      if (this.closing) this.nodeConnection.call(this.server, socket);
      else this.open.add(new DirectConnection(this, socket));
    });
    server.on('listening', () => {
      this.closing = false;
      this.sweep = setInterval(() => this.checkTimeouts(), SWEEP_MS).unref();
    });
    server.on('close', () => clearInterval(this.sweep));
  }

  /** Node's timeouts, with Node's answers: idle keep-alive connections end, a head that lingers gets a 408. */
  checkTimeouts() {
    const now = Date.now();
    for (const connection of this.open) connection.checkTimeouts(now);
  }

  closeIdle() {
    this.closing = true;
    for (const connection of this.open) connection.closeWhenIdle();
  }

  closeAll() {
    this.closing = true;
    for (const connection of this.open) connection.socket.destroy();
    this.open.clear();
  }
}

/** HTTP dates change once a second; Node's server caches its own the same way. */
let dateSecond = -1;
let dateText = '';
function httpDate(now: number): string {
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

class DirectConnection {
  readonly owner: DirectConnections;
  readonly socket: Socket;
  /** Bytes read and not yet answered: part of a request, or a whole one and more (pipelined). */
  pending: Buffer | undefined = undefined;
  /** The head of the request whose body is still arriving. */
  awaiting: DirectRequest | undefined = undefined;
  /** When the first byte of the request being read arrived (0: none is). */
  requestStarted = 0;
  idleSince = Date.now();
  /** An answer is being made: what arrives meanwhile waits, and its reading is paused. */
  answering = false;
  readonly onData: (chunk: Buffer) => void;
  readonly onEnd: () => void;
  readonly onError: () => void;
  readonly onTimeout: () => void;
  readonly onClose: () => void;

  constructor(owner: DirectConnections, socket: Socket) {
    this.owner = owner;
    this.socket = socket;
    this.onData = (chunk) => this.read(chunk);
    this.onEnd = () => this.ended();
    // A reset or a broken pipe: the connection is gone, and so is any answer to it.
    this.onError = () => socket.destroy();
    // Node's idle timeout of the server (its `timeout`), while no answer is under way.
    this.onTimeout = () => {
      if (!this.answering) socket.destroy();
    };
    this.onClose = () => owner.open.delete(this);
    if (owner.server.timeout > 0) socket.setTimeout(owner.server.timeout);
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('timeout', this.onTimeout);
    socket.on('close', this.onClose);
  }

  read(chunk: Buffer) {
    if (this.pending === undefined) {
      this.pending = chunk;
      if (this.requestStarted === 0) this.requestStarted = Date.now();
    } else this.pending = Buffer.concat([this.pending, chunk]);
    if (!this.answering) this.next();
    // A pipelining client: what it sends waits in the socket until the answer is out.
    else this.socket.pause();
  }

  /** Answers the next whole request in `pending`, waits for the rest of one, or hands the connection over. */
  next() {
    const bytes = this.pending;
    if (bytes === undefined) return;
    let request = this.awaiting;
    if (request === undefined) {
      const head = readRequestHead(bytes, 0, this.owner.options.bodyLimitOf, MAX_DIRECT_HEAD_BYTES);
      if (head.kind === 'incomplete') return;
      if (head.kind === 'other') {
        this.handOver();
        return;
      }
      request = head;
    }
    const end = request.bodyStart + request.contentLength;
    if (bytes.length < end) {
      this.awaiting = request;
      return;
    }
    this.awaiting = undefined;
    this.pending = end === bytes.length ? undefined : bytes.subarray(end);
    this.answering = true;
    this.owner.options.answer(request, bytes.subarray(request.bodyStart, end), this.socket.remoteAddress).then(
      (answer) => this.write(answer),
      () => this.socket.destroy(),
    );
  }

  write(answer: DirectAnswer) {
    const { socket, owner } = this;
    this.answering = false;
    // The client has gone, or half-closed, which Node's server takes as gone too.
    if (!socket.writable) return;
    const now = Date.now();
    // The server is closing: the answer says so, and the connection ends after it.
    const close = owner.closing;
    let text = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n`;
    const { headers } = answer;
    for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
    text += `Date: ${httpDate(now)}\r\n`;
    text += close ? 'Connection: close\r\n\r\n' : `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(owner.server.keepAliveTimeout / 1000)}\r\n\r\n`;
    socket.write(text + answer.body);
    if (close) {
      owner.open.delete(this);
      socket.end();
      return;
    }
    this.idleSince = now;
    this.requestStarted = this.pending === undefined ? 0 : now;
    if (socket.isPaused()) socket.resume();
    this.next();
  }

  /**
   * Gives the connection to Node's HTTP server as if it had just connected, with the bytes read
   * and not answered put back in front of what the socket has still to deliver.
   */
  handOver() {
    const { socket, owner } = this;
    owner.open.delete(this);
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('error', this.onError);
    socket.off('timeout', this.onTimeout);
    socket.off('close', this.onClose);
    if (this.pending !== undefined) socket.unshift(this.pending);
    this.pending = undefined;
    owner.nodeConnection.call(owner.server, socket);
    // Node's reader starts a paused socket only once it flows again.
    if (socket.isPaused()) socket.resume();
  }

  /**
   * The client has sent all it will (a half-close). Node's server (without `httpAllowHalfOpen`)
   * takes that as a client gone: it ends the connection, and an answer under way is not sent.
   */
  ended() {
    this.owner.open.delete(this);
    this.socket.end();
  }

  checkTimeouts(now: number) {
    if (this.answering) return;
    const { server } = this.owner;
    if (this.awaiting !== undefined) {
      // A body slower than Node's head timeout: Node's request timeout is the one that applies.
      if (server.headersTimeout > 0 && now - this.requestStarted > server.headersTimeout) this.handOver();
    } else if (this.pending !== undefined) {
      if (server.headersTimeout > 0 && now - this.requestStarted > server.headersTimeout) {
        this.owner.open.delete(this);
        this.socket.end(REQUEST_TIMEOUT_ANSWER, () => this.socket.destroy());
      }
    } else if (server.keepAliveTimeout > 0 && now - this.idleSince > server.keepAliveTimeout) {
      this.owner.open.delete(this);
      this.socket.destroy();
    }
  }

  closeWhenIdle() {
    // One answering ends once its answer is out (the server is closing).
    if (!this.answering) {
      this.owner.open.delete(this);
      this.socket.destroy();
    }
  }
}
