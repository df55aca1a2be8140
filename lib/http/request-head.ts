// The head of a tracker request, read byte by byte for the direct path (lib/http/direct-path.ts).
// It recognises only a strict subset of HTTP/1.1, the one the tracking script sends: anything it
// does not fully understand is `other`, and Node's HTTP server reads it instead, with every byte.
// So the two never read one request two ways (request smuggling): this reader either frames a
// request exactly as Node's parser would, or refuses to frame it at all.

/** A tracker request the direct path answers itself. */
export interface DirectRequest {
  kind: 'direct';
  /** The request target as sent (a direct path, with its query if any). */
  target: string;
  /** The target's path: a key of the routes the reader was given. */
  path: string;
  /** Header names lowercased, values without the blanks before them, as Node gives them. */
  headers: Record<string, string>;
  /** Where the body starts (just past the blank line that ends the head). */
  bodyStart: number;
  contentLength: number;
}

export type RequestHead = DirectRequest | { kind: 'incomplete' } | { kind: 'other' };

const INCOMPLETE: RequestHead = { kind: 'incomplete' };
const OTHER: RequestHead = { kind: 'other' };

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;
const QUESTION = 0x3f;
const METHOD = Buffer.from('POST /', 'latin1');
const VERSION = Buffer.from(' HTTP/1.1\r\n', 'latin1');
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** More header lines than this: Node's to read (it keeps at most 2,000 by default and drops the rest). */
export const MAX_DIRECT_HEADERS = 100;

/** RFC 9110 tchar: the bytes of a header name. */
const TOKEN = byteSet("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
/** RFC 3986 path and query characters, percent escapes included; no fragment, no blanks. */
const TARGET = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:@/?");

/** Headers the direct path leaves to Node: they change how the body is framed or who is asking. */
const LEFT_TO_NODE = new Set(['transfer-encoding', 'expect', 'upgrade', 'content-encoding', 'authorization', 'x-api-key', 'proxy-connection', '__proto__']);

function byteSet(chars: string): Uint8Array {
  const set = new Uint8Array(256);
  for (let i = 0; i < chars.length; i++) set[chars.charCodeAt(i)] = 1;
  return set;
}

/** A header value's byte: visible ASCII, a blank, or obs-text (RFC 9110 field-vchar); never a control. */
function valueByte(byte: number): boolean {
  return byte === HTAB || (byte >= SP && byte !== 0x7f);
}

/**
 * Reads the request starting at `start` in `bytes` (which may hold more than one request, or part
 * of one). `bodyLimitOf` names the direct paths and the largest body each takes; `maxHeadBytes`
 * bounds the head, blank line included.
 */
export function readRequestHead(bytes: Buffer, start: number, bodyLimitOf: (path: string) => number | undefined, maxHeadBytes: number): RequestHead {
  const available = bytes.length - start;
  // The method and the target's first byte, as far as they have arrived.
  for (let i = 0; i < METHOD.length && i < available; i++) if (bytes[start + i] !== METHOD[i]) return OTHER;
  const headEnd = bytes.indexOf(HEAD_END, start);
  if (headEnd === -1 || headEnd + HEAD_END.length - start > maxHeadBytes) {
    return available >= maxHeadBytes || bareLineFeed(bytes, start) ? OTHER : INCOMPLETE;
  }
  const bodyStart = headEnd + HEAD_END.length;

  // Request line: POST <target> HTTP/1.1
  const targetStart = start + METHOD.length - 1;
  let at = targetStart;
  let pathEnd = -1;
  while (at < headEnd && bytes[at] !== SP) {
    if (TARGET[bytes[at]] !== 1) return OTHER;
    if (bytes[at] === QUESTION && pathEnd === -1) pathEnd = at;
    at++;
  }
  if (at === headEnd) return OTHER;
  const target = bytes.toString('latin1', targetStart, at);
  const path = pathEnd === -1 ? target : bytes.toString('latin1', targetStart, pathEnd);
  const bodyLimit = bodyLimitOf(path);
  if (bodyLimit === undefined) return OTHER;
  for (let i = 0; i < VERSION.length; i++) if (bytes[at + i] !== VERSION[i]) return OTHER;
  at += VERSION.length;

  // Header lines: a token, a colon, blanks, a value without controls, CR LF. No line may start
  // with a blank (an obsolete folded line), and a bare CR or LF ends nothing.
  const headers: Record<string, string> = {};
  let count = 0;
  let contentLength = -1;
  let host = false;
  while (at < bodyStart) {
    if (bytes[at] === CR) return at === headEnd + 2 && bytes[at + 1] === LF ? finish() : OTHER;
    if (++count > MAX_DIRECT_HEADERS) return OTHER;
    const nameStart = at;
    while (TOKEN[bytes[at]] === 1) at++;
    if (at === nameStart || bytes[at] !== COLON) return OTHER;
    const name = bytes.toString('latin1', nameStart, at).toLowerCase();
    at++;
    while (bytes[at] === SP || bytes[at] === HTAB) at++;
    const valueStart = at;
    while (at < bodyStart && valueByte(bytes[at])) at++;
    if (bytes[at] !== CR || bytes[at + 1] !== LF) return OTHER;
    // Blanks after a value: Node's parser has its own rules for them, so it reads such a request.
    if (at > valueStart && (bytes[at - 1] === SP || bytes[at - 1] === HTAB)) return OTHER;
    if (headers[name] !== undefined || LEFT_TO_NODE.has(name)) return OTHER;
    const value = bytes.toString('latin1', valueStart, at);
    at += 2;
    if (name === 'content-length') {
      contentLength = digits(value);
      if (contentLength === -1 || contentLength > bodyLimit) return OTHER;
    } else if (name === 'connection') {
      // `close`, or any other option, is Node's to honour.
      if (value.toLowerCase() !== 'keep-alive') return OTHER;
    } else if (name === 'host') host = true;
    headers[name] = value;
  }
  return OTHER;

  function finish(): RequestHead {
    if (contentLength === -1 || !host) return OTHER;
    return { kind: 'direct', target, path, headers, bodyStart, contentLength };
  }
}

/** Whether a line ends without its CR: such a head never ends as this reader wants, and Node answers it now. */
function bareLineFeed(bytes: Buffer, start: number): boolean {
  for (let at = bytes.indexOf(LF, start); at !== -1; at = bytes.indexOf(LF, at + 1)) if (at === start || bytes[at - 1] !== CR) return true;
  return false;
}

/** A Content-Length of 1 to 15 decimal digits and nothing else (no sign, no blank, no list), or -1. */
function digits(value: string): number {
  if (value.length === 0 || value.length > 15) return -1;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return -1;
  }
  return Number(value);
}
