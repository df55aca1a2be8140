// The import flow as a client drives it over HTTP: create the import with its files' sizes and
// checksums, upload each file in chunks, validate, start, and wait for the outcome.
import { expect } from '@jest/globals';
import { createHash } from 'node:crypto';
import { request } from './instance.ts';
import { call } from './site-figures.ts';

export interface ImportView {
  id: string;
  state: 'pending' | 'validating' | 'validated' | 'running' | 'completed' | 'failed';
  files: { index: number; name: string; size: number; received: number; complete: boolean }[];
  manifest: { rows_accepted: number; rows_skipped: number; from: string | null; to: string | null } | null;
  error: { message: string; file: string | null; line: number | null } | null;
}

export const CHUNK_BYTES = 8 * 1024 * 1024;

/** Uploads the bytes of one file from `from` on, a chunk per request; returns the last answer's body. */
export async function uploadFile(url: string, auth: string, siteId: string, importId: string, index: number, bytes: Uint8Array<ArrayBuffer>, from = 0) {
  let answer: Record<string, unknown> = {};
  for (let offset = from; offset < bytes.length || (offset === 0 && bytes.length === 0); offset += CHUNK_BYTES) {
    const res = await request(`${url}/api/sites/${siteId}/imports/${importId}/files/${index}?offset=${offset}`, {
      method: 'PUT',
      headers: { ...(auth.startsWith('Bearer ') ? { Authorization: auth } : { Cookie: auth }), 'Content-Type': 'application/octet-stream' },
      body: bytes.slice(offset, offset + CHUNK_BYTES),
    });
    expect(res.status).toBe(200);
    answer = res.body;
    if (bytes.length === 0) break;
  }
  return answer;
}

/** Polls the import until it leaves `state`; returns it as it is then. */
export async function settled(url: string, auth: string, siteId: string, importId: string, state: ImportView['state'], timeoutMs = 120_000): Promise<ImportView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(url, auth, 'GET', `/api/sites/${siteId}/imports/${importId}`);
    expect(res.status).toBe(200);
    const view = res.body as unknown as ImportView;
    if (view.state !== state) return view;
    if (Date.now() > deadline) throw new Error(`import ${importId} still ${state} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The whole flow for files held in memory; returns the validated import and the finished one. */
export async function importFiles(url: string, auth: string, siteId: string, source: string, files: { name: string; bytes: Uint8Array<ArrayBuffer> }[]) {
  const created = await call(url, auth, 'POST', `/api/sites/${siteId}/imports`, {
    source,
    files: files.map((file) => ({ name: file.name, size: file.bytes.length, sha256: createHash('sha256').update(file.bytes).digest('hex') })),
  });
  expect(created.status).toBe(201);
  const importId = (created.body as unknown as ImportView).id;
  for (const [index, file] of files.entries()) await uploadFile(url, auth, siteId, importId, index, file.bytes);
  expect((await call(url, auth, 'POST', `/api/sites/${siteId}/imports/${importId}/validate`)).status).toBe(202);
  const validated = await settled(url, auth, siteId, importId, 'validating');
  expect(validated).toMatchObject({ state: 'validated', error: null });
  expect((await call(url, auth, 'POST', `/api/sites/${siteId}/imports/${importId}/start`)).status).toBe(202);
  const finished = await settled(url, auth, siteId, importId, 'running');
  return { validated, finished };
}
