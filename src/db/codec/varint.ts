/**
 * Unsigned LEB128 varints, the numbers of every encoding (codec.ts): seven bits a byte, low bits
 * first, the high bit set on every byte but the last. Values up to 2^53 (a day's sums);
 * arithmetic rather than shifts past 31 bits. Signed differences go through zigzag first.
 */

export const zigzag = (n: number) => (n >= 0 ? n * 2 : -n * 2 - 1);
export const unzigzag = (n: number) => (n & 1 ? -(n + 1) / 2 : n / 2);

export class VarintWriter {
  private bytes: Uint8Array;
  private length = 0;

  constructor(capacity = 256) {
    this.bytes = new Uint8Array(capacity);
  }

  varint(value: number): void {
    if (this.length + 8 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    let v = value;
    while (v >= 0x80) {
      this.bytes[this.length++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.bytes[this.length++] = v;
  }

  get size(): number {
    return this.length;
  }

  /** The bytes written, without a copy (valid until the next write). */
  view(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  /** The bytes written, copied into a Buffer of their own. */
  done(): Buffer {
    return Buffer.from(this.view());
  }
}

/** Reads varints from `bytes`, starting at `position`; `what` names the data in errors. */
export class VarintReader {
  constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
    public position = 0,
  ) {}

  get more(): boolean {
    return this.position < this.bytes.length;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = this.bytes[this.position++];
      if (byte === undefined) throw new Error(`${this.what} ends inside a number`);
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
      if (scale > 2 ** 56) throw new Error(`${this.what} holds a number too large`);
    }
  }
}
