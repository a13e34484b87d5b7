/**
 * The packed stages of one sleep session in `sleep_sessions.stages` (docs/decisions/0016-sleep-and-body-storage.md).
 * Stages are contiguous and start at the session's start (the API refuses anything else), so
 * each is only its kind and its length:
 *
 *   varint unit            60, 30 or 1: the longest of these that divides every stage's length
 *   varint (length / unit) × 4 + code   per stage, in order
 *
 * as unsigned LEB128 varints. With whole minutes, a stage of up to 31 minutes is one byte (in
 * 30-second epochs up to 15.5 minutes) and one of up to 68 hours two: a night of forty stages
 * is forty to eighty bytes.
 * The codes are stored: never reorder SLEEP_STAGE_CODES, only append (there is room for none:
 * two bits).
 */

/** The kinds of stage, by their stored code. */
export const SLEEP_STAGE_CODES = ['awake', 'light', 'deep', 'rem'] as const;
export type SleepStageName = (typeof SLEEP_STAGE_CODES)[number];

/** One stage as the API shows it: [start_time, end_time) in Unix seconds. */
export interface SleepStage {
  stage: SleepStageName;
  start_time: number;
  end_time: number;
}

const UNITS = [60, 30, 1] as const;

function pushVarint(out: number[], value: number): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/** Packs contiguous stages (the first starting at the session's start). */
export function packStages(stages: readonly SleepStage[]): Buffer {
  const lengths = stages.map((stage) => stage.end_time - stage.start_time);
  const unit = UNITS.find((u) => lengths.every((length) => length % u === 0)) ?? 1;
  const out: number[] = [];
  pushVarint(out, unit);
  for (let i = 0; i < stages.length; i++) {
    const code = SLEEP_STAGE_CODES.indexOf(stages[i]!.stage);
    if (code < 0 || lengths[i]! <= 0) throw new Error('a sleep stage to pack has no known kind or no length');
    pushVarint(out, (lengths[i]! / unit) * 4 + code);
  }
  return Buffer.from(out);
}

/** A reader of the varints of packed stages, in order. */
function varints(bytes: Uint8Array) {
  let position = 0;
  return {
    more: () => position < bytes.length,
    next(): number {
      let value = 0;
      let scale = 1;
      for (;;) {
        const byte = bytes[position++];
        if (byte === undefined) throw new Error('packed sleep stages end inside a number');
        value += (byte & 0x7f) * scale;
        if (byte < 0x80) return value;
        scale *= 128;
      }
    },
  };
}

/** The stages of a session that starts at `start`, from their packed form. */
export function unpackStages(start: number, bytes: Uint8Array): SleepStage[] {
  const packed = varints(bytes);
  const varint = packed.next;
  const unit = varint();
  const stages: SleepStage[] = [];
  let time = start;
  while (packed.more()) {
    const value = varint();
    const end = time + Math.floor(value / 4) * unit;
    stages.push({ stage: SLEEP_STAGE_CODES[value % 4]!, start_time: time, end_time: end });
    time = end;
  }
  return stages;
}

/**
 * Seconds asleep (every stage but awake) of a session, from its packed stages without unpacking
 * them: what the daily summary needs of each session (its minutes asleep).
 */
export function asleepSeconds(bytes: Uint8Array): number {
  const packed = varints(bytes);
  const unit = packed.next();
  let asleep = 0;
  while (packed.more()) {
    const value = packed.next();
    if (SLEEP_STAGE_CODES[value % 4] !== 'awake') asleep += Math.floor(value / 4) * unit;
  }
  return asleep;
}
