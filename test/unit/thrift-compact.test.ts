// Thrift's compact protocol as Parquet footers use it: every wire type read and written back to
// the same bytes, field ids past a jump of 15, long lists, and input that ends early or holds a
// type the protocol does not have.
import { describe, expect, it } from '@jest/globals';
import { decodeStruct, encodeStruct, ThriftError, type ThriftStruct, TYPE } from '../../lib/exports/thrift-compact.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('the Thrift compact protocol', () => {
  it('reads the specification’s field headers: short deltas, a long id, booleans in the type', () => {
    // {1: i32 1, 2: true, 3: false, 300: i16 -2}
    const input = bytes(0x15, 0x02, 0x11, 0x12, 0x04, 0xd8, 0x04, 0x03, 0x00);
    const { struct, length } = decodeStruct(input);
    expect(struct).toEqual([
      { id: 1, type: TYPE.i32, value: 1 },
      { id: 2, type: TYPE.bool, value: true },
      { id: 3, type: TYPE.bool, value: false },
      { id: 300, type: TYPE.i16, value: -2 },
    ]);
    expect(length).toBe(input.length);
    expect(encodeStruct(struct)).toEqual(input);
  });

  it('writes every type and reads it back unchanged', () => {
    const struct: ThriftStruct = [
      { id: 1, type: TYPE.i8, value: -7 },
      { id: 2, type: TYPE.i64, value: -(2n ** 63n) },
      { id: 3, type: TYPE.i64, value: 2n ** 63n - 1n },
      { id: 4, type: TYPE.double, value: -1.5e300 },
      { id: 5, type: TYPE.binary, value: new TextEncoder().encode('päge') },
      { id: 6, type: TYPE.list, value: { elementType: TYPE.i32, items: Array.from({ length: 40 }, (_, i) => i * 1000 - 20_000) } },
      { id: 7, type: TYPE.set, value: { elementType: TYPE.bool, items: [true, false, true] } },
      { id: 8, type: TYPE.map, value: { keyType: TYPE.binary, valueType: TYPE.struct, entries: [[bytes(1, 2), [{ id: 1, type: TYPE.bool, value: false }]]] } },
      { id: 9, type: TYPE.map, value: { keyType: 0, valueType: 0, entries: [] } },
      { id: 40, type: TYPE.struct, value: [{ id: 1, type: TYPE.list, value: { elementType: TYPE.struct, items: [[], [{ id: 2, type: TYPE.i64, value: 5n }]] } }] },
    ];
    const encoded = encodeStruct(struct);
    const decoded = decodeStruct(encoded);
    expect(decoded.struct).toEqual(struct);
    expect(decoded.length).toBe(encoded.length);
  });

  it('refuses input that ends inside a value, and a wire type the protocol does not have', () => {
    expect(() => decodeStruct(bytes(0x18, 0x05, 0x61))).toThrow(ThriftError);
    expect(() => decodeStruct(bytes(0x15))).toThrow(/ends inside a value/);
    expect(() => decodeStruct(bytes(0x17, 0, 0, 0))).toThrow(/ends inside a value/);
    expect(() => decodeStruct(bytes(0x1d, 0x00))).toThrow(/unknown wire type 13/);
    expect(() => decodeStruct(bytes(0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01))).toThrow(/varint longer than 10 bytes/);
  });
});
