// Thrift's compact protocol, read into and written from a generic tree that keeps every field,
// known or not: a Parquet footer decoded and encoded again is the same bytes, so Plumb can move
// row groups between files by editing only the offsets it knows, whatever else the writer put
// there. Field ids and wire types are those of the protocol's specification
// (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md).

export const TYPE = { bool: 1, i8: 3, i16: 4, i32: 5, i64: 6, double: 7, binary: 8, list: 9, set: 10, map: 11, struct: 12 } as const;

export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftStruct | ThriftList | ThriftMap;
export interface ThriftField {
  id: number;
  /** A wire type of TYPE (a boolean field is `bool`, whatever its value). */
  type: number;
  value: ThriftValue;
}
export type ThriftStruct = ThriftField[];
export interface ThriftList {
  elementType: number;
  items: ThriftValue[];
}
export interface ThriftMap {
  keyType: number;
  valueType: number;
  entries: [ThriftValue, ThriftValue][];
}

/** Wire type 2 is a boolean field whose value is false; in a tree both are `bool`. */
const BOOLEAN_FALSE = 2;

export class ThriftError extends Error {}

export function decodeStruct(bytes: Uint8Array): { struct: ThriftStruct; length: number } {
  const reader = new Reader(bytes);
  const struct = reader.struct();
  return { struct, length: reader.position };
}

export function encodeStruct(struct: ThriftStruct): Uint8Array {
  const writer = new Writer();
  writer.struct(struct);
  return writer.bytes();
}

/** The field `id` of `struct`, if it has one. */
export const field = (struct: ThriftStruct, id: number): ThriftField | undefined => struct.find((f) => f.id === id);

class Reader {
  position = 0;
  private readonly input: Uint8Array;
  constructor(input: Uint8Array) {
    this.input = input;
  }

  private byte(): number {
    if (this.position >= this.input.length) throw new ThriftError('thrift: the input ends inside a value');
    return this.input[this.position++]!;
  }

  private varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = this.byte();
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
    throw new ThriftError('thrift: a varint longer than 10 bytes');
  }

  private zigzag(): bigint {
    const value = this.varint();
    return (value >> 1n) ^ -(value & 1n);
  }

  struct(): ThriftStruct {
    const fields: ThriftStruct = [];
    let last = 0;
    for (;;) {
      const header = this.byte();
      if (header === 0) return fields;
      const type = header & 0x0f;
      const delta = header >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      if (type === TYPE.bool || type === BOOLEAN_FALSE) fields.push({ id, type: TYPE.bool, value: type === TYPE.bool });
      else fields.push({ id, type, value: this.value(type) });
      last = id;
    }
  }

  private value(type: number): ThriftValue {
    switch (type) {
      case TYPE.bool:
      case BOOLEAN_FALSE:
        return this.byte() === TYPE.bool;
      case TYPE.i8:
        return (this.byte() << 24) >> 24;
      case TYPE.i16:
      case TYPE.i32:
        return Number(this.zigzag());
      case TYPE.i64:
        return BigInt.asIntN(64, this.zigzag());
      case TYPE.double: {
        if (this.position + 8 > this.input.length) throw new ThriftError('thrift: the input ends inside a value');
        const view = new DataView(this.input.buffer, this.input.byteOffset + this.position, 8);
        this.position += 8;
        return view.getFloat64(0, true);
      }
      case TYPE.binary: {
        const length = Number(this.varint());
        const end = this.position + length;
        if (end > this.input.length) throw new ThriftError('thrift: the input ends inside a value');
        const bytes = this.input.subarray(this.position, end);
        this.position = end;
        return bytes;
      }
      case TYPE.list:
      case TYPE.set: {
        const header = this.byte();
        const size = header >> 4 === 15 ? Number(this.varint()) : header >> 4;
        const elementType = header & 0x0f;
        const items: ThriftValue[] = [];
        for (let i = 0; i < size; i++) items.push(this.value(elementType));
        return { elementType, items };
      }
      case TYPE.map: {
        const size = Number(this.varint());
        if (size === 0) return { keyType: 0, valueType: 0, entries: [] };
        const types = this.byte();
        const entries: [ThriftValue, ThriftValue][] = [];
        for (let i = 0; i < size; i++) entries.push([this.value(types >> 4), this.value(types & 0x0f)]);
        return { keyType: types >> 4, valueType: types & 0x0f, entries };
      }
      case TYPE.struct:
        return this.struct();
      default:
        throw new ThriftError(`thrift: unknown wire type ${type}`);
    }
  }
}

class Writer {
  private readonly parts: number[] = [];
  private readonly chunks: Uint8Array[] = [];

  bytes(): Uint8Array {
    this.flush();
    return Buffer.concat(this.chunks);
  }

  private flush(): void {
    if (this.parts.length > 0) this.chunks.push(Uint8Array.from(this.parts.splice(0)));
  }

  private varint(value: bigint): void {
    let rest = BigInt.asUintN(64, value);
    while (rest >= 0x80n) {
      this.parts.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.parts.push(Number(rest));
  }

  private zigzag(value: bigint): void {
    this.varint((value << 1n) ^ (value >> 63n));
  }

  struct(struct: ThriftStruct): void {
    let last = 0;
    for (const { id, type, value } of struct) {
      const wire = type === TYPE.bool ? (value ? TYPE.bool : BOOLEAN_FALSE) : type;
      if (id > last && id - last <= 15) this.parts.push(((id - last) << 4) | wire);
      else {
        this.parts.push(wire);
        this.zigzag(BigInt(id));
      }
      if (type !== TYPE.bool) this.value(type, value);
      last = id;
    }
    this.parts.push(0);
  }

  private value(type: number, value: ThriftValue): void {
    switch (type) {
      case TYPE.bool:
      case BOOLEAN_FALSE:
        this.parts.push(value ? TYPE.bool : BOOLEAN_FALSE);
        return;
      case TYPE.i8:
        this.parts.push((value as number) & 0xff);
        return;
      case TYPE.i16:
      case TYPE.i32:
        this.zigzag(BigInt(value as number));
        return;
      case TYPE.i64:
        this.zigzag(BigInt.asIntN(64, value as bigint));
        return;
      case TYPE.double: {
        const bytes = new Uint8Array(8);
        new DataView(bytes.buffer).setFloat64(0, value as number, true);
        this.parts.push(...bytes);
        return;
      }
      case TYPE.binary: {
        const bytes = value as Uint8Array;
        this.varint(BigInt(bytes.length));
        this.flush();
        this.chunks.push(bytes);
        return;
      }
      case TYPE.list:
      case TYPE.set: {
        const { elementType, items } = value as ThriftList;
        if (items.length < 15) this.parts.push((items.length << 4) | elementType);
        else {
          this.parts.push(0xf0 | elementType);
          this.varint(BigInt(items.length));
        }
        for (const item of items) this.value(elementType, item);
        return;
      }
      case TYPE.map: {
        const { keyType, valueType, entries } = value as ThriftMap;
        this.varint(BigInt(entries.length));
        if (entries.length === 0) return;
        this.parts.push((keyType << 4) | valueType);
        for (const [key, item] of entries) {
          this.value(keyType, key);
          this.value(valueType, item);
        }
        return;
      }
      case TYPE.struct:
        this.struct(value as ThriftStruct);
        return;
      default:
        throw new ThriftError(`thrift: unknown wire type ${type}`);
    }
  }
}
