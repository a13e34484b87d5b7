/**
 * A simulated person's device, a day at a time: the day's data (src/domain/synthetic-person.ts,
 * a wearable reading the heart every 20 s while awake) cut into the 96 quarter-hours of the local
 * day, each quarter one sync of steps, calories and heart rate; the night's sleep and the
 * morning's weighing sent once a day with the first sync after waking's quarter 32 (08:00).
 */
import { DateTime } from 'luxon';
import {
  NIGHT_SHIFT_WORKER, OFFICE_WORKER, RUNNER, WEARABLE, synthesizePerson,
  type HeartRateReading, type Life, type MinuteSample, type SleepSessionInput, type WeightInput,
} from '../../src/domain/synthetic-person.js';

export const QUARTERS_PER_DAY = 96;
const QUARTER = 900;
/** The local quarter-hour with which a day's night and weighing are sent. */
const MORNING_QUARTER = 32;
const LIVES: Life[] = [OFFICE_WORKER, RUNNER, NIGHT_SHIFT_WORKER];

export interface Upload {
  kind: 'steps' | 'calories' | 'heartrate' | 'sleep' | 'weight';
  path: string;
  body: string;
}

interface Day {
  steps: MinuteSample[][];
  calories: MinuteSample[][];
  heartrate: HeartRateReading[][];
  sleep: SleepSessionInput[];
  weight: WeightInput[];
}

function quarters<T>(items: readonly T[], timeOf: (item: T) => number, midnight: number): T[][] {
  const cut: T[][] = Array.from({ length: QUARTERS_PER_DAY }, () => []);
  for (const item of items) {
    const index = Math.floor((timeOf(item) - midnight) / QUARTER);
    if (index >= 0 && index < QUARTERS_PER_DAY) cut[index]!.push(item);
  }
  return cut;
}

export class SimulatedPerson {
  readonly life: Life;
  /** Quarter-hours synced so far; the simulated clock of this person. */
  synced = 0;
  private day: { index: number; data: Day } | null = null;

  constructor(readonly index: number, readonly token: string, private readonly firstDate: string) {
    this.life = LIVES[index % LIVES.length]!;
  }

  /** Whole days lived so far (each counted once its last quarter is synced). */
  get personDays(): number {
    return this.synced / QUARTERS_PER_DAY;
  }

  /** The local date of the next sync, ISO. */
  get date(): string {
    return DateTime.fromISO(this.firstDate, { zone: 'UTC' }).plus({ days: Math.floor(this.synced / QUARTERS_PER_DAY) }).toISODate()!;
  }

  /** The uploads of the next quarter-hour's sync (empty lists are not sent), and the clock moved on. */
  nextSync(): Upload[] {
    const dayIndex = Math.floor(this.synced / QUARTERS_PER_DAY);
    const quarter = this.synced % QUARTERS_PER_DAY;
    const day = this.dayData(dayIndex);
    this.synced++;
    const uploads: Upload[] = [];
    const samples = (kind: 'steps' | 'calories', path: string, list: MinuteSample[]) => {
      if (list.length > 0) uploads.push({ kind, path, body: JSON.stringify({ samples: list }) });
    };
    samples('steps', '/v1/users/me/activities/steps', day.steps[quarter]!);
    samples('calories', '/v1/users/me/activities/calories', day.calories[quarter]!);
    if (day.heartrate[quarter]!.length > 0) uploads.push({ kind: 'heartrate', path: '/v1/users/me/heartrate', body: JSON.stringify({ samples: day.heartrate[quarter] }) });
    if (quarter === MORNING_QUARTER) {
      for (const night of day.sleep) uploads.push({ kind: 'sleep', path: '/v1/users/me/sleep', body: JSON.stringify(night) });
      for (const weighing of day.weight) uploads.push({ kind: 'weight', path: '/v1/users/me/body/weight', body: JSON.stringify(weighing) });
    }
    return uploads;
  }

  private dayData(index: number): Day {
    if (this.day?.index === index) return this.day.data;
    const date = DateTime.fromISO(this.firstDate, { zone: 'UTC' }).plus({ days: index }).toISODate()!;
    const midnight = DateTime.fromISO(date, { zone: this.life.timezone });
    const now = midnight.endOf('day').toSeconds();
    const data = synthesizePerson(this.life, Math.floor(now), 1, this.index * 100_003 + index, WEARABLE);
    const start = midnight.toSeconds();
    const day: Day = {
      steps: quarters(data.steps, (s) => s.start_time, start),
      calories: quarters(data.calories, (s) => s.start_time, start),
      heartrate: quarters(data.heartrate, (r) => r.time, start),
      sleep: data.sleep,
      weight: data.weight,
    };
    this.day = { index, data: day };
    return day;
  }
}
