/**
 * The format byte in front of a packed body, and the one rule of when a body is deflated: RAW
 * keeps the body as it is, DEFLATED holds node:zlib's deflateRaw of it, whichever is shorter (RAW
 * on a tie). An empty body is stored as no bytes at all. Each encoding chooses only the deflate
 * strategy that suits its numbers (docs/lab-notes/2026-11-29-codec.md).
 */
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';

export const RAW = 0;
export const DEFLATED = 1;

/** zlib's strategies: the default, or Z_FILTERED (fewer string matches, more Huffman coding). */
export type DeflateStrategy = typeof constants.Z_DEFAULT_STRATEGY | typeof constants.Z_FILTERED;
export const DEFAULT_STRATEGY: DeflateStrategy = constants.Z_DEFAULT_STRATEGY;
export const FILTERED: DeflateStrategy = constants.Z_FILTERED;

/** The body behind its format byte, deflated when that is shorter. */
export function frame(body: Uint8Array, strategy: DeflateStrategy): Buffer {
  if (body.length === 0) return Buffer.alloc(0);
  const deflated = deflateRawSync(body, { strategy });
  const deflate = deflated.length < body.length;
  const chosen = deflate ? deflated : body;
  const packed = Buffer.allocUnsafe(chosen.length + 1);
  packed[0] = deflate ? DEFLATED : RAW;
  packed.set(chosen, 1);
  return packed;
}

/** The body of framed bytes (empty for no bytes); `what` names the data in errors. */
export function unframe(bytes: Uint8Array, what: string): Uint8Array {
  if (bytes.length === 0) return bytes;
  switch (bytes[0]) {
    case RAW:
      return bytes.subarray(1);
    case DEFLATED:
      return inflateRawSync(bytes.subarray(1));
    default:
      throw new Error(`${what} has the unknown format ${bytes[0]}`);
  }
}
