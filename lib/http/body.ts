// Reads and parses a request body with a hard byte limit, so an oversized or hostile body is
// refused (413/400/415) before it is buffered whole.
import type { IncomingMessage } from 'node:http';
import { PlumbError, payloadTooLarge } from '../errors.ts';

export interface BodyOptions {
  limitBytes: number;
  /** Accept JSON sent as text/plain (sendBeacon). */
  acceptTextPlain: boolean;
}

/** Returns the parsed JSON object, or undefined when the request has no body. */
export async function readJsonBody(req: IncomingMessage, options: BodyOptions): Promise<Record<string, unknown> | undefined> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > options.limitBytes) {
    req.resume();
    throw payloadTooLarge(options.limitBytes);
  }
  const { chunks, size } = await collect(req, options.limitBytes);
  if (size === 0) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const isJson = type === 'application/json' || type.endsWith('+json');
  if (!isJson && !(options.acceptTextPlain && type === 'text/plain')) {
    throw new PlumbError(415, 'unsupported_media_type', `Content-Type must be application/json${options.acceptTextPlain ? ' or text/plain' : ''}`);
  }
  let parsed: unknown;
  try {
    // A tracker body arrives in one chunk; concatenating it would only copy it.
    parsed = JSON.parse((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8'));
  } catch (err) {
    throw new PlumbError(400, 'invalid_json', `Request body is not valid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new PlumbError(400, 'invalid_json', 'Request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/**
 * Buffers the body up to the limit with plain stream events: an async iterator over the request
 * costs more than the rest of a small ingest request. Past the limit, the rest is drained unread.
 */
function collect(req: IncomingMessage, limitBytes: number): Promise<{ chunks: Buffer[]; size: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        req.resume();
        reject(payloadTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({ chunks, size });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
