// The ring the single node keeps the encoded lines of waiting ingest records in: a line is never
// split or overwritten before it is released, and a full ring refuses a line instead.
import { describe, expect, it } from '@jest/globals';
import { LineRing } from '../../lib/ingest/line-ring.ts';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('LineRing', () => {
  it('gives back the text and bytes of each line added, multi-byte text included', () => {
    const ring = new LineRing(64);
    const first = ring.add(bytes('["/a",1]'));
    const second = ring.add(bytes('["/ü€😀",2]'));
    expect(ring.text(first, 8)).toBe('["/a",1]');
    expect(ring.text(second, bytes('["/ü€😀",2]').length)).toBe('["/ü€😀",2]');
    const target = Buffer.alloc(20, 0x20);
    expect(ring.copy(first, 8, target, 2)).toBe(8);
    expect(target.toString()).toBe('  ["/a",1]          ');
  });

  it('starts a line that would cross the end at the beginning, once the lines there are released', () => {
    const ring = new LineRing(16);
    const first = ring.add(bytes('0123456789'));
    expect(ring.add(bytes('abcdefgh'))).toBe(-1);
    ring.release(first + 10);
    const wrapped = ring.add(bytes('abcdefgh'));
    // Skips the 6 bytes left at the end: the line is whole, at the start of the buffer.
    expect(wrapped).toBe(16);
    expect(ring.text(wrapped, 8)).toBe('abcdefgh');
    expect(ring.used).toBe(14);
  });

  it('refuses a line while the lines it would overwrite are not released, and never releases past what was added', () => {
    const ring = new LineRing(32);
    const lines = ['aaaaaaaaaa', 'bbbbbbbbbb', 'cccccccccc'].map((line) => ring.add(bytes(line)));
    expect(ring.add(bytes('dddddddddd'))).toBe(-1);
    ring.release(lines[0] + 10);
    const fourth = ring.add(bytes('dddddddddd'));
    expect(fourth).toBe(32);
    // The lines still held are intact.
    expect(ring.text(lines[1], 10)).toBe('bbbbbbbbbb');
    expect(ring.text(lines[2], 10)).toBe('cccccccccc');
    expect(ring.text(fourth, 10)).toBe('dddddddddd');
    ring.release(1_000);
    expect(ring.used).toBe(0);
    expect(ring.add(bytes('x'.repeat(33)))).toBe(-1);
    // A release behind the current one changes nothing.
    ring.release(0);
    expect(ring.used).toBe(0);
  });
});
