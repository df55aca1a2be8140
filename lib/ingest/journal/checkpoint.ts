// The journal's checkpoint file: where the first unacknowledged record is and, while a batch is out
// with the writer, that batch's exact range and token (the "intent"), so a crash replays it as is.
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface Position {
  segment: number;
  offset: number;
}

export interface Intent {
  start: Position;
  end: Position;
  token: string;
}

export interface Checkpoint extends Position {
  /** Random per journal directory: keeps batch tokens unique if the directory is ever recreated. */
  journal: string;
  intent?: Intent;
}

const FILE = 'checkpoint.json';

export function newJournalId(): string {
  return randomBytes(8).toString('hex');
}

/**
 * The token ClickHouse deduplicates the batch by. Derived from the batch's byte range, which never
 * changes once written, so the same records always get the same token.
 */
export function batchToken(journal: string, start: Position, end: Position): string {
  return `${journal}/${start.segment}:${start.offset}-${end.segment}:${end.offset}`;
}

const isPosition = (p: unknown): p is Position =>
  typeof p === 'object' && p !== null && Number.isSafeInteger((p as Position).segment) && Number.isSafeInteger((p as Position).offset);

/** The checkpoint on disk, or null before the first one. A checkpoint is replaced atomically, so an unreadable one is damage, not a crash. */
export async function readCheckpoint(dir: string): Promise<Checkpoint | null> {
  await rm(join(dir, `${FILE}.tmp`), { force: true });
  let text: string;
  try {
    text = await readFile(join(dir, FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let parsed: Checkpoint;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`journal ${dir}: ${FILE} is not valid JSON; it is written atomically, so the file was damaged outside Plumb`);
  }
  const intent = parsed.intent;
  const intentOk = intent === undefined || (isPosition(intent.start) && isPosition(intent.end) && typeof intent.token === 'string');
  if (!isPosition(parsed) || typeof parsed.journal !== 'string' || !intentOk) {
    throw new Error(`journal ${dir}: ${FILE} does not hold a valid position: ${text.slice(0, 200)}`);
  }
  return parsed;
}

/** Write tmp, fsync, rename over, fsync the directory: a reader sees the old or the new checkpoint, never a mix. */
export async function writeCheckpoint(dir: string, dirHandle: FileHandle, checkpoint: Checkpoint, fsync: boolean): Promise<void> {
  const tmp = join(dir, `${FILE}.tmp`);
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(JSON.stringify(checkpoint));
    if (fsync) await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, join(dir, FILE));
  if (fsync) await dirHandle.sync();
}
