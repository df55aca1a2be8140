// The dashboard's side of an import upload: the file's SHA-256 computed a slice at a time (the
// server compares it with what arrived), and the file sent in pieces that resume where the
// server's copy ends.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../web/src/api.ts';
import { fileSha256, Sha256 } from '../../web/src/imports/sha256.ts';
import { type ChunkAnswer, sendFile } from '../../web/src/imports/upload.ts';

const reference = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('SHA-256 fed piece by piece', () => {
  it('gives the known digests of the empty input and of "abc"', () => {
    expect(new Sha256().hex()).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(new Sha256().update(new TextEncoder().encode('abc')).hex()).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it.each([1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 100_003])('agrees with node:crypto on %i bytes, whole or cut at uneven places', (length) => {
    const bytes = new Uint8Array(randomBytes(length));
    expect(new Sha256().update(bytes).hex()).toBe(reference(bytes));
    const cut = new Sha256();
    for (let at = 0, step = 1; at < length; at += step, step = (step * 7 + 3) % 97 || 1) cut.update(bytes.subarray(at, at + step));
    expect(cut.hex()).toBe(reference(bytes));
  });

  it('hashes a file a slice at a time, saying how far it has read, to the whole file’s digest', async () => {
    const bytes = new Uint8Array(randomBytes(20 * 1024 * 1024 + 17));
    const heard: number[] = [];
    await expect(fileSha256(new Blob([bytes]), (n) => heard.push(n))).resolves.toBe(reference(bytes));
    expect(heard).toEqual([8 * 1024 * 1024, 16 * 1024 * 1024, bytes.length]);
  });

  it('refuses input after the digest and a second digest', () => {
    const hash = new Sha256();
    hash.hex();
    expect(() => hash.update(new Uint8Array(1))).toThrow('update after digest');
    expect(() => hash.hex()).toThrow('digest taken twice');
  });
});

/** A server's copy of one file: takes a piece only at its current end, as the import route does. */
function fakeServer(size: number, options: { failAt?: number } = {}) {
  const copy: number[] = [];
  const offsets: number[] = [];
  let failed = false;
  const send = async (offset: number, piece: Blob): Promise<ChunkAnswer> => {
    offsets.push(offset);
    if (offset !== copy.length) throw new ApiError(409, 'conflict', 'Offset does not match', [], { received: copy.length });
    if (options.failAt === offset && !failed) {
      failed = true;
      throw new TypeError('Failed to fetch');
    }
    copy.push(...new Uint8Array(await piece.arrayBuffer()));
    return { received: copy.length, complete: copy.length === size };
  };
  return { send, copy, offsets };
}

describe('sending a file in pieces', () => {
  const file = new Blob([new Uint8Array(25).map((_, i) => i)]);

  it('sends pieces of the chosen size at increasing offsets until the server says complete', async () => {
    const server = fakeServer(25);
    const progress: number[] = [];
    await sendFile(file, 0, server.send, (n) => progress.push(n), 10);
    expect(server.offsets).toEqual([0, 10, 20]);
    expect(progress).toEqual([10, 20, 25]);
    expect(server.copy).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('stops at a dropped connection, then resumes from what the server holds', async () => {
    const server = fakeServer(25, { failAt: 10 });
    await expect(sendFile(file, 0, server.send, () => {}, 10)).rejects.toThrow('Failed to fetch');
    expect(server.copy).toHaveLength(10);
    await sendFile(file, 10, server.send, () => {}, 10);
    expect(server.offsets).toEqual([0, 10, 10, 20]);
    expect(server.copy).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('continues from the server’s count when it refuses a piece at the wrong offset (409)', async () => {
    const server = fakeServer(25, { failAt: 20 });
    await expect(sendFile(file, 0, server.send, () => {}, 10)).rejects.toThrow('Failed to fetch');
    const progress: number[] = [];
    // The page starts over from 0; the server holds 20 bytes.
    await sendFile(file, 0, server.send, (n) => progress.push(n), 10);
    expect(server.offsets.slice(3)).toEqual([0, 20]);
    expect(progress).toEqual([20, 25]);
    expect(server.copy).toHaveLength(25);
  });

  it('gives up on a server that keeps refusing, and passes on any other refusal (a checksum mismatch)', async () => {
    const stubborn = async (): Promise<ChunkAnswer> => {
      throw new ApiError(409, 'conflict', 'Offset does not match', [], { received: 5 });
    };
    await expect(sendFile(file, 0, stubborn, () => {}, 10)).rejects.toThrow('Offset does not match');
    const mismatch = async (): Promise<ChunkAnswer> => {
      throw new ApiError(422, 'checksum_mismatch', 'The file’s SHA-256 does not match');
    };
    await expect(sendFile(file, 0, mismatch, () => {}, 10)).rejects.toThrow('SHA-256 does not match');
  });

  it('refuses to loop on a server that takes none of a piece', async () => {
    const stuck = async (): Promise<ChunkAnswer> => ({ received: 0, complete: false });
    await expect(sendFile(file, 0, stuck, () => {}, 10)).rejects.toThrow('took none of the piece at byte 0');
  });
});
