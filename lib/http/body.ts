// Reads and parses a request body with a hard byte limit, so an oversized or hostile body is
// refused (413/400/415) before it is buffered whole. A gzip or deflate body is decoded as it
// arrives, and the limit applies to the decoded bytes: a small bomb stops at the limit.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import { PlumbError, payloadTooLarge } from '../errors.ts';

export interface BodyOptions {
  limitBytes: number;
  /** Accept JSON sent as text/plain (sendBeacon). */
  acceptTextPlain: boolean;
}

/**
 * How deeply objects and arrays may nest in a body. Plumb's richest payloads (event properties,
 * a batch of server events, plugin settings) nest 3 to 4 levels; the margin is for clients'
 * own structure. Deeper JSON is refused before anything walks it recursively.
 */
export const MAX_JSON_DEPTH = 32;

/** Returns the parsed JSON object, or undefined when the request has no body. */
export async function readJsonBody(req: IncomingMessage, options: BodyOptions): Promise<Record<string, unknown> | undefined> {
  const encoding = contentEncoding(req);
  if (encoding === undefined) {
    req.resume();
    throw new PlumbError(415, 'unsupported_media_type', 'Content-Encoding must be gzip, deflate or identity');
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > options.limitBytes) {
    req.resume();
    throw payloadTooLarge(options.limitBytes);
  }
  const { chunks, size } = await collect(encoding === 'identity' ? req : decoded(req, encoding), options.limitBytes, req);
  // A tracker body arrives in one chunk; concatenating it would only copy it.
  return parseJsonBody(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size), req.headers['content-type'], options.acceptTextPlain);
}

/**
 * A whole body's JSON object, or undefined when it is empty: its Content-Type checked, its
 * nesting bounded, the object required. The direct path (lib/http/direct-path.ts) reads its
 * bodies itself and parses them here.
 */
export function parseJsonBody(bytes: Buffer, contentType: string | undefined, acceptTextPlain: boolean): Record<string, unknown> | undefined {
  const size = bytes.length;
  if (size === 0) return undefined;
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const isJson = type === 'application/json' || type.endsWith('+json');
  if (!isJson && !(acceptTextPlain && type === 'text/plain')) {
    throw new PlumbError(415, 'unsupported_media_type', `Content-Type must be application/json${acceptTextPlain ? ' or text/plain' : ''}`);
  }
  const text = bytes.toString('utf8');
  // A large body is refused before it is parsed (nested arrays parse ~10× slower than their scan);
  // a small one costs less walked once parsed (V8's JSON.parse is not recursive) than scanned.
  const scanned = size > SCANNED_FROM_BYTES;
  if (scanned && nestingDepth(text) > MAX_JSON_DEPTH) throw tooDeep();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new PlumbError(400, 'invalid_json', `Request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!scanned && nestsDeeperThan(parsed, MAX_JSON_DEPTH)) throw tooDeep();
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new PlumbError(400, 'invalid_json', 'Request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/** Bodies this large or larger have their nesting scanned before they are parsed. */
const SCANNED_FROM_BYTES = 16 * 1024;

const tooDeep = () => new PlumbError(400, 'invalid_json', `Request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`);

/** Whether objects and arrays in a parsed JSON value nest more than `max` levels, walked without recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: { node: object; depth: number }[] = [];
  if (value !== null && typeof value === 'object') pending.push({ node: value, depth: 1 });
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > max) return true;
    const node = next.node as Record<string, unknown>;
    for (const key in node) {
      const child = node[key];
      if (child !== null && typeof child === 'object') pending.push({ node: child, depth: next.depth + 1 });
    }
  }
  return false;
}

/**
 * The bytes of an application/octet-stream body (an upload chunk), decoded and limited like a
 * JSON body; empty when there is none. Any other Content-Type is refused before anything is read.
 */
export async function readRawBody(req: IncomingMessage, options: { limitBytes: number; /** Any Content-Type (a form whose bytes are dropped). */ anyType?: boolean }): Promise<Buffer> {
  const encoding = contentEncoding(req);
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (encoding === undefined || (type !== 'application/octet-stream' && !options.anyType)) {
    req.resume();
    throw new PlumbError(415, 'unsupported_media_type', encoding === undefined ? 'Content-Encoding must be gzip, deflate or identity' : 'Content-Type must be application/octet-stream');
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > options.limitBytes) {
    req.resume();
    throw payloadTooLarge(options.limitBytes);
  }
  const { chunks, size } = await collect(encoding === 'identity' ? req : decoded(req, encoding), options.limitBytes, req);
  return Buffer.concat(chunks, size);
}

type Encoding = 'identity' | 'gzip' | 'deflate';

/** The body's Content-Encoding, if it is one this reader decodes (RFC 9110 §8.4; x-gzip is gzip). */
function contentEncoding(req: IncomingMessage): Encoding | undefined {
  const header = req.headers['content-encoding'];
  if (header === undefined) return 'identity';
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return 'identity';
  if (codings.length > 1) return undefined;
  if (codings[0] === 'gzip' || codings[0] === 'x-gzip') return 'gzip';
  if (codings[0] === 'deflate') return 'deflate';
  return undefined;
}

function decoded(req: IncomingMessage, encoding: 'gzip' | 'deflate'): Readable {
  const decoder = encoding === 'gzip' ? createGunzip() : createInflate();
  req.on('error', (err) => decoder.destroy(err));
  return req.pipe(decoder);
}

/**
 * The deepest nesting of objects and arrays in a JSON text, counted in one pass without
 * recursion (brackets inside strings do not count). Invalid JSON is left to the parser.
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/**
 * Buffers the body up to the limit with plain stream events: an async iterator over the request
 * costs more than the rest of a small ingest request. Past the limit, the request's rest is
 * drained unread (and a decoder is stopped, so it inflates nothing more).
 */
function collect(source: Readable, limitBytes: number, req: IncomingMessage): Promise<{ chunks: Buffer[]; size: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        if (source !== req) {
          req.unpipe();
          source.destroy();
        }
        req.resume();
        reject(payloadTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    // The listeners stay once the body has ended: nothing more comes, they go with the request, and
    // removing three of them cost as much as adding them.
    const onEnd = () => resolve({ chunks, size });
    const onError = (err: Error & { code?: string }) => {
      cleanup();
      if (source !== req) req.resume();
      // zlib's errors (truncated or corrupt data) are the client's: the body cannot be decoded.
      if (source !== req && err.code?.startsWith('Z_')) reject(new PlumbError(400, 'bad_request', `Request body could not be decoded: ${err.message}`));
      else reject(err);
    };
    const cleanup = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
    };
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
  });
}
