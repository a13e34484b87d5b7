/**
 * The encoding of the stages of one sleep session in `sleep_sessions.stages`
 * (docs/decisions/0016-sleep-and-body-storage.md). Stages are contiguous and start at the session's
 * start (the API refuses anything else), so each is only its kind and its length:
 *
 *   varint unit            60, 30 or 1: the longest of these that divides every stage's length
 *   varint (length / unit) × 4 + code   per stage, in order
 *
 * as unsigned LEB128 varints (varint.ts), with no format byte and never deflated: a night of forty
 * stages is forty to eighty bytes. With whole minutes, a stage of up to 31 minutes is one byte (in
 * 30-second epochs up to 15.5 minutes) and one of up to 68 hours two.
 * The codes are stored: never reorder SLEEP_STAGE_CODES, only append (there is room for none:
 * two bits).
 */
import type { Codec } from './codec.js';
import { VarintReader, VarintWriter } from './varint.js';

/** The kinds of stage, by their stored code. */
export const SLEEP_STAGE_CODES = ['awake', 'light', 'deep', 'rem'] as const;
export type SleepStageName = (typeof SLEEP_STAGE_CODES)[number];

/** One stage as the API shows it: [start_time, end_time) in Unix seconds. */
export interface SleepStage {
  stage: SleepStageName;
  start_time: number;
  end_time: number;
}

/** One stage as it is packed: its kind and its length in seconds. */
export interface StageLength {
  stage: SleepStageName;
  seconds: number;
}

const UNITS = [60, 30, 1] as const;
const WHAT = "a packed sleep session's stages";

function packLengths(stages: readonly StageLength[]): Buffer {
  const unit = UNITS.find((u) => stages.every((stage) => stage.seconds % u === 0)) ?? 1;
  const out = new VarintWriter(64);
  out.varint(unit);
  for (const { stage, seconds } of stages) {
    const code = SLEEP_STAGE_CODES.indexOf(stage);
    if (code < 0 || seconds <= 0) throw new Error('a sleep stage to pack has no known kind or no length');
    out.varint((seconds / unit) * 4 + code);
  }
  return out.done();
}

function* iterateLengths(bytes: Uint8Array): IterableIterator<StageLength> {
  const input = new VarintReader(bytes, WHAT);
  const unit = input.varint();
  while (input.more) {
    const value = input.varint();
    yield { stage: SLEEP_STAGE_CODES[value % 4]!, seconds: Math.floor(value / 4) * unit };
  }
}

export const sleepStages: Codec<StageLength[], StageLength> = {
  name: 'sleep stages',
  encode: packLengths,
  decode: (bytes) => [...iterateLengths(bytes)],
  iterate: iterateLengths,
};

/** Packs contiguous stages (the first starting at the session's start). */
export function packStages(stages: readonly SleepStage[]): Buffer {
  return packLengths(stages.map((stage) => ({ stage: stage.stage, seconds: stage.end_time - stage.start_time })));
}

/** The stages of a session that starts at `start`, from their packed form. */
export function unpackStages(start: number, bytes: Uint8Array): SleepStage[] {
  const stages: SleepStage[] = [];
  let time = start;
  for (const { stage, seconds } of iterateLengths(bytes)) {
    stages.push({ stage, start_time: time, end_time: time + seconds });
    time += seconds;
  }
  return stages;
}

/**
 * Seconds asleep (every stage but awake) of a session, from its packed stages without building
 * them: what the daily summary needs of each session (its minutes asleep).
 */
export function asleepSeconds(bytes: Uint8Array): number {
  let asleep = 0;
  for (const { stage, seconds } of iterateLengths(bytes)) if (stage !== 'awake') asleep += seconds;
  return asleep;
}
