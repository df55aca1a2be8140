// Where the forwarder stands in each log: the file (by inode), the byte offset just past the last
// line whose batch the server accepted, and the batch being sent. Written whole to a temporary file, fsync'd, renamed
// over the old one and the directory fsync'd, so a crash leaves the old state or the new one.
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

export interface LogPosition {
  /** The file's inode (a string: inodes can exceed 2^53). */
  inode: string;
  offset: number;
  /**
   * The end of the batch being sent from `offset`, saved before it is sent: after a crash the same
   * lines are sent again as one batch, under the same key, whatever was appended to the log since.
   */
  sendingTo?: number;
}

interface StateFile {
  version: 1;
  logs: Record<string, LogPosition>;
}

export class StateFileError extends Error {
  constructor(path: string, problem: string) {
    super(`state file ${path}: ${problem}`);
    this.name = 'StateFileError';
  }
}

export interface StateStore {
  readonly path: string;
  position(log: string): LogPosition | undefined;
  /** Records a log's position durably; resolves once it is on disk. */
  save(log: string, position: LogPosition): Promise<void>;
}

function parsed(path: string, text: string): StateFile {
  let state: unknown;
  try {
    state = JSON.parse(text);
  } catch {
    throw new StateFileError(path, 'is not JSON; remove it to read the logs from their start');
  }
  const logs = (state as StateFile | null)?.logs;
  if ((state as StateFile | null)?.version !== 1 || typeof logs !== 'object' || logs === null) throw new StateFileError(path, 'is not a forwarder state file');
  for (const position of Object.values(logs)) {
    const sendingTo = position?.sendingTo;
    const valid = typeof position?.inode === 'string' && Number.isSafeInteger(position.offset) && position.offset >= 0;
    if (!valid || (sendingTo !== undefined && !(Number.isSafeInteger(sendingTo) && sendingTo > position.offset))) throw new StateFileError(path, 'holds a position that is not an inode and an offset');
  }
  return state as StateFile;
}

/** Opens (or starts) a state file; logs are keyed by their absolute path, so one file can hold several. */
export async function openStateStore(path: string): Promise<StateStore> {
  let state: StateFile = { version: 1, logs: {} };
  try {
    state = parsed(path, await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let writing = Promise.resolve();
  const write = async () => {
    const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
    const file = await open(temporary, 'w', 0o644);
    try {
      await file.writeFile(`${JSON.stringify(state)}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await rename(temporary, path);
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
    const directory = await open(dirname(path), 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  };
  return {
    path,
    position: (log) => state.logs[resolve(log)],
    save(log, position) {
      state = { ...state, logs: { ...state.logs, [resolve(log)]: position } };
      // One write at a time, each of the whole state as it is when it starts.
      writing = writing.catch(() => undefined).then(write);
      return writing;
    },
  };
}
