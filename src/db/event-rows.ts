/**
 * How a row of `events` names what it tells (docs/decisions/0042-compact-events.md): its event
 * types as bits of one small integer — a row holds the events of one change of one kind for one
 * app, `steps.updated` and `distance.updated` of a steps upload together — and its person as the
 * 16 bytes of their UUID. The bits are stored: each keeps its type for good, and a new type takes
 * a new bit.
 */
import { SERIES_METRIC_NAMES, SERIES_METRICS } from './series-metrics.js';

/**
 * The bit of each event type in `events.types`. Never renumbered: a series metric's is declared with
 * it (series-metrics.ts, `eventBit`), the others' here.
 */
export const EVENT_TYPE_BITS: Readonly<Record<string, number>> = {
  ...Object.fromEntries(SERIES_METRIC_NAMES.map((metric) => [SERIES_METRICS[metric].event, SERIES_METRICS[metric].eventBit])),
  'sleep.updated': 4,
  'body.updated': 5,
  'profile.updated': 6,
  'grant.created': 7,
  'grant.revoked': 8,
};

const TYPE_OF_BIT: readonly string[] = Object.entries(EVENT_TYPE_BITS)
  .sort(([, a], [, b]) => a - b)
  .map(([type]) => type);

// typesOf reads bits 0 to n−1: a bit given twice, or one skipped, would tell a row's types wrong.
if (TYPE_OF_BIT.some((type, bit) => EVENT_TYPE_BITS[type] !== bit)) throw new Error('the bits of the event types are not 0 to n−1, each once');

/** The bit of `type`; throws for a type no row can hold. */
export function bitOf(type: string): number {
  const bit = EVENT_TYPE_BITS[type];
  if (bit === undefined) throw new Error(`${type} is not an event type a row of events can hold`);
  return bit;
}

/** `events.types` of rows holding any of `types`. */
export function maskOf(types: Iterable<string>): number {
  let mask = 0;
  for (const type of types) mask |= 1 << bitOf(type);
  return mask;
}

/** The types of a row, in the order its events are told: by bit. */
export function typesOf(mask: number): string[] {
  const types: string[] = [];
  for (let bit = 0; bit < TYPE_OF_BIT.length; bit++) if (mask & (1 << bit)) types.push(TYPE_OF_BIT[bit]!);
  if (types.length === 0 || mask >> TYPE_OF_BIT.length !== 0) throw new Error(`events.types ${mask} names no event type, or one unknown`);
  return types;
}

/** crypto.randomUUID()'s shape: every account's id (store/identifiers.ts). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Before any other id's UTF-8 bytes, which never hold 0xff: an id of any other shape (a row
 * written before ids were checked, a test's) is kept as it is, and never read as a UUID.
 */
export const OTHER_ID = 0xff;

/** `events.user_id` of a person: the 16 bytes of a UUID, or OTHER_ID and the id's bytes. */
export function storedUserId(id: string): Buffer {
  if (UUID.test(id)) return Buffer.from(id.replaceAll('-', ''), 'hex');
  return Buffer.concat([Buffer.from([OTHER_ID]), Buffer.from(id, 'utf8')]);
}

/** The id that storedUserId stored. */
export function userIdOfStored(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length === 16) {
    const hex = buffer.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  if (buffer[0] !== OTHER_ID) throw new Error('events.user_id holds neither a UUID nor another id');
  return buffer.subarray(1).toString('utf8');
}
