// Where the encoded lines of the records waiting for the writer are kept on a single node: as
// UTF-8 bytes in one buffer used as a ring, instead of as strings. Those records live about a
// second (until their batch is stored), so V8 promotes whatever they hold to its old generation,
// where it dies and costs full collections: under full ingest the lines were most of what was
// promoted. One buffer, made once, is neither traced nor promoted, and, unlike a buffer per round
// or per record, it does not count as new external memory towards the next full collection.
//
// A line's place is its position in the count of bytes ever added, so a place is never reused
// before the writer has released it: add() answers -1 (the record keeps its text) rather than
// overwrite a line that is not stored yet.

export class LineRing {
  readonly #buffer: Buffer;
  /** Bytes ever added, including the ends of the buffer skipped so that a line is never split. */
  #added = 0;
  /** Lines before this position are stored: their bytes may be overwritten. */
  #released = 0;

  /**
   * A ring of `capacity` bytes, in memory a worker thread may read too (the writer's visit states
   * read the lines where they are); or, given that memory, a view of another thread's ring.
   */
  constructor(capacity: number | SharedArrayBuffer) {
    this.#buffer = Buffer.from(typeof capacity === 'number' ? new SharedArrayBuffer(capacity) : capacity);
  }

  get capacity(): number {
    return this.#buffer.length;
  }

  /** The ring's memory, for a worker thread to read its lines (new LineRing(shared)). */
  get shared(): SharedArrayBuffer {
    return this.#buffer.buffer as SharedArrayBuffer;
  }

  /** Bytes ever added, skipped ends included: the position the next line goes after. */
  get added(): number {
    return this.#added;
  }

  /** Bytes added and not released yet, skipped ends included. */
  get used(): number {
    return this.#added - this.#released;
  }

  /** Copies the line in (`source`'s bytes from `start` to `end`); answers its position, or -1 when the ring has no room for it. */
  add(source: Buffer, start = 0, end = source.length): number {
    const length = end - start;
    const capacity = this.#buffer.length;
    let position = this.#added;
    const at = position % capacity;
    // A line that would cross the end starts at the beginning instead.
    if (at + length > capacity) position += capacity - at;
    if (position + length - this.#released > capacity) return -1;
    source.copy(this.#buffer, position % capacity, start, end);
    this.#added = position + length;
    return position;
  }

  /** The text of the line at `position`, `length` bytes long. */
  text(position: number, length: number): string {
    const at = position % this.#buffer.length;
    return this.#buffer.toString('utf8', at, at + length);
  }

  /** Copies the line at `position` into `target` at `targetAt`; answers the bytes copied. */
  copy(position: number, length: number, target: Buffer, targetAt: number): number {
    const at = position % this.#buffer.length;
    return this.#buffer.copy(target, targetAt, at, at + length);
  }

  /** The lines before `position` are stored: their bytes may be overwritten. */
  release(position: number): void {
    if (position > this.#released) this.#released = Math.min(position, this.#added);
  }
}
