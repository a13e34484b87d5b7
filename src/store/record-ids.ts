/**
 * Public ids of a person's sleep sessions and weight measurements (docs/api.md): opaque strings
 * such as `slp_AABmZpmRAAAE0g`. Inside, the row's key — the session's start or the measurement's
 * time, 6 bytes — and a random 31-bit tag kept in the row, base64url-encoded behind a prefix of
 * the kind. An id is looked up by the person's primary key, time and tag, so no index of ids is
 * needed (each would cost about as much as the row); the tag makes an id of a deleted record
 * name nothing once another record is stored at the same time, and ids of different people
 * differ. Anything that is not exactly such an id names nothing (and reaches no SQL).
 */
import { randomInt } from 'node:crypto';

export type RecordKind = 'slp' | 'wgt';

export interface RecordKey {
  time: number;
  tag: number;
}

/** 6 bytes of time (up to 2^48, past any time the API accepts) and 4 of tag. */
const BYTES = 10;

/** A new random tag: 31 bits, so that it fits a signed 32-bit integer column on both databases. */
export const newIdTag = (): number => randomInt(0, 2 ** 31);

export function formatRecordId(kind: RecordKind, key: RecordKey): string {
  const bytes = Buffer.alloc(BYTES);
  bytes.writeUIntBE(key.time, 0, 6);
  bytes.writeUInt32BE(key.tag, 6);
  return `${kind}_${bytes.toString('base64url')}`;
}

/** The key an id names, or null when `id` is not an id of this kind. */
export function parseRecordId(kind: RecordKind, id: string): RecordKey | null {
  if (id.length !== kind.length + 15 || !id.startsWith(`${kind}_`)) return null;
  const text = id.slice(kind.length + 1);
  if (!/^[A-Za-z0-9_-]{14}$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  // Only the one spelling formatRecordId writes (the last character carries 4 unused bits).
  if (bytes.length !== BYTES || bytes.toString('base64url') !== text) return null;
  const tag = bytes.readUInt32BE(6);
  return tag < 2 ** 31 ? { time: bytes.readUIntBE(0, 6), tag } : null;
}
