// Uploading an import's files: each file in pieces of 8 MiB (PUT …/files/{index}?offset=N), so a
// dropped connection costs one piece and the upload resumes where the server's copy ends. The
// server answers a piece sent at the wrong offset with 409 and how many bytes it holds; the upload
// goes on from there. Once the last byte is in, the server checks the file's SHA-256.
import { ApiError, putBytes } from '../api.ts';

export const CHUNK_BYTES = 8 * 1024 * 1024;

/** The server's answer to a piece: how much of the file it now holds. */
export interface ChunkAnswer {
  received: number;
  complete: boolean;
}

export type SendChunk = (offset: number, bytes: Blob) => Promise<ChunkAnswer>;

/** How many 409s in a row are taken as "continue from there" before the upload gives up. */
const MAX_REDIRECTS = 3;

/**
 * Sends `file` from byte `from` on, a piece at a time, until the server says it is complete.
 * `onProgress` hears the bytes the server holds after each piece. Any other refusal is thrown.
 */
export async function sendFile(file: Blob, from: number, send: SendChunk, onProgress: (received: number) => void, chunkBytes = CHUNK_BYTES): Promise<void> {
  let offset = from;
  let redirects = 0;
  for (;;) {
    const piece = file.slice(offset, Math.min(file.size, offset + chunkBytes));
    let answer: ChunkAnswer;
    try {
      answer = await send(offset, piece);
    } catch (err) {
      const held = err instanceof ApiError && err.status === 409 ? Number(err.details.received) : Number.NaN;
      if (!Number.isInteger(held) || held < 0 || held > file.size || ++redirects > MAX_REDIRECTS) throw err;
      offset = held;
      onProgress(held);
      continue;
    }
    redirects = 0;
    onProgress(answer.received);
    if (answer.complete) return;
    // A server that keeps no more than before would have this loop send the same piece forever.
    if (answer.received <= offset && piece.size > 0) throw new Error(`The server took none of the piece at byte ${offset}`);
    if (answer.received >= file.size) throw new Error('The server holds the whole file but does not say it is complete');
    offset = answer.received;
  }
}

/** The PUT of one piece of an import's file. */
export const importChunkSender =
  (siteId: string, importId: string, index: number, signal?: AbortSignal): SendChunk =>
  (offset, bytes) =>
    putBytes<ChunkAnswer>(`/api/sites/${encodeURIComponent(siteId)}/imports/${encodeURIComponent(importId)}/files/${index}`, bytes, { query: { offset }, signal });
