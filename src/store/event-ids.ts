/**
 * The ids of events and the cursors of the feed (docs/decisions/0042-compact-events.md). A row of
 * `events` keeps no id: an event's id is its row's seq and its type's bit, enciphered as one
 * AES block under a key of the server's — a permutation, so no two events share an id, and
 * without the key an id says nothing of the seq: an app cannot count the events of the whole
 * service from the ids (or cursors) it is given, as it could from a plain sequence number. The
 * cursor (txid, seq, and how many events of that row the app has read) is enciphered the same way
 * under a key of its own.
 *
 * The key is the server secret `event_ids` (made by migration 022), read once per database.
 */
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** Where a page of the feed ends: after `given` events of the row (`txid`, `seq`), or after all of it. */
export interface FeedPosition {
  /** PostgreSQL's transaction id (xid8) in decimal; '0' on SQLite. */
  txid: string;
  seq: number;
  /** How many of the row's events were given; WHOLE_ROW for all (every cursor of before 022). */
  given: number;
}

/** A row holds at most one event per type, far fewer than this. */
export const WHOLE_ROW = 255;

export interface EventIds {
  /** `evt_` and 32 hex digits, for each [seq, bit]: the shape of every event id since the first. */
  ids(events: ReadonlyArray<readonly [seq: number, bit: number]>): string[];
  cursor(position: FeedPosition): string;
  /** The position of a cursor this feed gave (before 022 too), or null for anything else. */
  position(cursor: string): FeedPosition | null;
}

const BLOCK = 16;
const MAX_SEQ = 2 ** 48;

function aes(key: KeyObject, blocks: Buffer, decipher = false): Buffer {
  const cipher = decipher ? createDecipheriv('aes-256-ecb', key, null) : createCipheriv('aes-256-ecb', key, null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(blocks), cipher.final()]);
}

/** A cursor of before 022: base64url of `txid.seq`, in the clear. */
const CLEAR_CURSOR = /^(\d{1,20})\.(\d{1,18})$/;

export function eventIdsFrom(secret: Buffer): EventIds {
  const key = (purpose: string) => createSecretKey(Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `stride ${purpose}`, 32)));
  const idKey = key('event ids');
  const cursorKey = key('feed cursors');
  return {
    ids(events) {
      if (events.length === 0) return [];
      const blocks = Buffer.alloc(events.length * BLOCK);
      for (const [i, [seq, bit]] of events.entries()) {
        if (!Number.isSafeInteger(seq) || seq < 0 || seq >= MAX_SEQ) throw new Error(`event seq ${seq} out of range`);
        blocks.writeUIntBE(seq, i * BLOCK, 6);
        blocks[i * BLOCK + 6] = bit;
      }
      const hex = aes(idKey, blocks).toString('hex');
      return events.map((_, i) => `evt_${hex.slice(i * 2 * BLOCK, (i + 1) * 2 * BLOCK)}`);
    },
    cursor({ txid, seq, given }) {
      const block = Buffer.alloc(BLOCK);
      block.writeBigUInt64BE(BigInt(txid), 0);
      block.writeUIntBE(seq, 8, 6);
      block[14] = given;
      return aes(cursorKey, block).toString('base64url');
    },
    position(cursor) {
      const bytes = Buffer.from(cursor, 'base64url');
      const clear = CLEAR_CURSOR.exec(bytes.toString('latin1'));
      if (clear) return { txid: clear[1]!, seq: Number(clear[2]), given: WHOLE_ROW };
      if (bytes.length !== BLOCK || bytes.toString('base64url') !== cursor) return null;
      const block = aes(cursorKey, bytes, true);
      // The last byte is always 0: most cursors not made here are refused.
      if (block[15] !== 0 || block[14]! === 0) return null;
      return { txid: block.readBigUInt64BE(0).toString(), seq: block.readUIntBE(8, 6), given: block[14]! };
    },
  };
}

/** By the dialect's adapter: one per Kysely instance, shared by its transactions (as db/prepared-query.ts). */
const keptFor = new WeakMap<object, Promise<EventIds>>();

/**
 * The ids of `q`'s database, its secret read on first use and kept; a read that fails (the
 * database away) is not kept.
 */
export function eventIdsOf(q: Kysely<Database>): Promise<EventIds> {
  const adapter = q.getExecutor().adapter;
  let kept = keptFor.get(adapter);
  if (kept === undefined) {
    kept = readIds(q);
    keptFor.set(adapter, kept);
    kept.catch(() => keptFor.delete(adapter));
  }
  return kept;
}

async function readIds(q: Kysely<Database>): Promise<EventIds> {
  const row = await q.selectFrom('server_secrets').select('value').where('name', '=', 'event_ids').executeTakeFirst();
  if (!row) throw new Error('the server secret event_ids is missing: the database is not migrated (stride migrate)');
  return eventIdsFrom(Buffer.from(row.value, 'base64url'));
}
