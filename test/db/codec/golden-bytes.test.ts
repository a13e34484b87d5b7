/**
 * Bytes that the encoders wrote before the codec module (db/codec/): rows of today's databases hold
 * them, so every decoder must keep reading them. The hex strings are what the former
 * db/series-day.ts, db/heart-rate-day.ts and db/sleep-stages.ts packed for the inputs below; both
 * format bytes (RAW and DEFLATED) of both minute encodings are among them. Today's encoders are held
 * to the same bytes too, so that a change of an encoder is seen here before it reaches a database.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DEFLATED, RAW } from '../../../src/db/codec/frame.js';
import { emptyHeartRateDay, heartRateMinutes, type HeartRateMinutes } from '../../../src/db/codec/heart-rate-minutes.js';
import { packHeartRateDay, summarize, unpackSummary, unpackTotal } from '../../../src/db/codec/heart-rate-summary.js';
import { emptyDay, hourSums, minuteValues, packDay, unpackHours, type DayMinutes } from '../../../src/db/codec/minute-values.js';
import { packStages, unpackStages, type SleepStage, type SleepStageName } from '../../../src/db/codec/sleep-stages.js';
import { lowestHalfHour } from '../../../src/domain/resting-heart-rate.js';

function minuteDays(): Record<string, DayMinutes> {
  const sparse = emptyDay();
  sparse[600] = 42;
  const walker = emptyDay();
  for (let m = 420; m < 1380; m++) walker[m] = m % 97 < 20 ? 90 + (m % 13) : 0;
  const large = emptyDay();
  large[0] = 2 ** 31 - 1;
  large[1] = 0;
  large[1439] = 300_000;
  for (let m = 60; m < 70; m++) large[m] = m * 1000;
  return { sparse, walker, large };
}

function heartDays(): Record<string, HeartRateMinutes> {
  const block = emptyHeartRateDay();
  for (let m = 300; m < 400; m++) {
    block.avg[m] = 60 + (m % 7);
    block.min[m] = 58 + (m % 7);
    block.max[m] = 60 + (m % 7) + (m % 11);
  }
  const one = emptyHeartRateDay();
  one.avg[1439] = 250;
  one.min[1439] = 25;
  one.max[1439] = 250;
  const spread = emptyHeartRateDay();
  for (let m = 0; m < 1440; m += 3) {
    const avg = 25 + ((m * 31) % 226);
    spread.avg[m] = avg;
    spread.min[m] = Math.max(25, avg - (m % 5));
    spread.max[m] = Math.min(250, avg + (m % 9));
  }
  return { block, one, spread };
}

const NIGHT_START = 1_718_000_000;
const nights: Record<string, Array<[SleepStageName, number]>> = {
  minutes: [['light', 600], ['deep', 1800], ['rem', 1200], ['awake', 60], ['light', 3600]],
  epochs: [['awake', 30], ['light', 90], ['deep', 600], ['rem', 30]],
  seconds: [['light', 17], ['deep', 86_400], ['awake', 1]],
};

function stagesOf(night: Array<[SleepStageName, number]>): SleepStage[] {
  let time = NIGHT_START;
  return night.map(([stage, seconds]) => ({ stage, start_time: time, end_time: (time += seconds) }));
}

const MINUTES = {
  sparse: '00d804012a',
  walker:
    '015bc27c809d815210179f9098949c929a16151d130be5506c283240351ac2a1aa05b158bc40550b92b17881aa' +
    '16c460f102552d408f601087aa16a047308843550b30d2686a5a14552dc048a371f10954b500339ba5a6313000' +
    '00',
  large:
    '000002ffffffff07003a0ae0d403c8dc03b0e40398ec0380f403e8fb03d08304b88b04a09304889b04d90a01e0' +
    'a712',
};
const HOURS = {
  sparse: '000000000000000000002a00000000000000000000000000',
  walker: '0000000000000000870fc40db901800f9203f10bf90e00890fe00992058f0f00eb0e950f00',
  large: 'ffffffff0788af27000000000000000000000000000000000000000000e0a712',
};
const HEART_MINUTES = {
  block: '01635cc394d2c2c8cdc4c4c4c4c4447b8ab6809985958d9d83938b8191764c00',
  one: '00019f0b01f403e10100',
  spread:
    '017bc0ccc0c8340a47e1281ca2d06817e32ec64e2608c6cf1a553154550c3e178daaa04e1c323033b20c2b8211' +
    '5d8c6130b88a028289a01206bcb26ca888015d84910d430d1a6226a460902346741126825a5806dacd78110382' +
    '0d00',
};
const HEART_HOURS = {
  block:
    '00000000000000000000000000000000000000000fcb010f050f030f010f000f020a0400000000000000000000' +
    '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000' +
    '000000000000000000000000000021122112',
  one:
    '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000' +
    '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000' +
    '000000000001e80200e101',
  spread:
    '05fa03057e057e057e05c50205860105860105bd0205840105840105840105bf0205820105820105c102058001' +
    '05800105800105c302057e057e05c50205860105860105bd0205840105840105840105bf0205820105820105c1' +
    '0205800105800105800105c302057e057e05c50205860105860105bd0205840105840105840105bf0205820105' +
    '820105820105c10205800105800105800105c302057e057e05c50205860105860105bd02058401058401058401' +
    '05bf0205820105820105c10205800105800105800105c302057e057e05c50205860105860105bd020584010584' +
    '0105840105bf0205820105820105c10205800105800105800105c302057e057e05c50205860105860105860105' +
    'bd0205840100e10109d80107d80105dc0108d80106db0104d90100d90103db0101d90100d60100db0108d9010b' +
    'd60107d70105dc0103dc0106d50104dc0102d60100dd0101d80100d5010ad701',
};
const HEART_TOTALS = {
  block: 44212524354429028n,
  one: 68746320793601n,
  spread: 68746455269856n,
};
const STAGES = {
  minutes: '3c297a5304f101',
  epochs: '1e040d5207',
  seconds: '0145828c1504',
};

const bytes = (hex: string) => Buffer.from(hex, 'hex');

it('reads minute values as the former encoder wrote them, raw and deflated', () => {
  const days = minuteDays();
  assert.deepEqual(new Set(Object.values(MINUTES).map((hex) => bytes(hex)[0])), new Set([RAW, DEFLATED]));
  for (const [name, day] of Object.entries(days)) {
    const hex = MINUTES[name as keyof typeof MINUTES];
    assert.deepEqual(minuteValues.decode(bytes(hex)), day, name);
    assert.deepEqual([...minuteValues.iterate(bytes(hex))], [...day.entries()].filter(([, value]) => value >= 0).map(([minute, value]) => ({ minute, value })), name);
    assert.deepEqual(unpackHours(bytes(HOURS[name as keyof typeof HOURS])), hourSums(day), name);
    const packed = packDay(day);
    assert.equal(packed.minutes.toString('hex'), hex, `${name}: today's encoder writes the same bytes`);
    assert.equal(packed.hours.toString('hex'), HOURS[name as keyof typeof HOURS], name);
  }
});

it('reads heart-rate days as the former encoder wrote them: minutes raw and deflated, summary and total', () => {
  const days = heartDays();
  assert.deepEqual(new Set(Object.values(HEART_MINUTES).map((hex) => bytes(hex)[0])), new Set([RAW, DEFLATED]));
  for (const [name, day] of Object.entries(days)) {
    const key = name as keyof typeof HEART_MINUTES;
    assert.deepEqual(heartRateMinutes.decode(bytes(HEART_MINUTES[key])), day, name);
    assert.equal([...heartRateMinutes.iterate(bytes(HEART_MINUTES[key]))].length, [...day.avg].filter((avg) => avg !== 0).length, name);
    assert.deepEqual(unpackSummary(bytes(HEART_HOURS[key])), summarize(day), name);
    const resting = lowestHalfHour(summarize(day).quarterCounts, summarize(day).quarterSums);
    assert.equal(unpackTotal(HEART_TOTALS[key]).restingTenths, resting === null ? 0 : Math.round(resting * 10), name);
    const packed = packHeartRateDay(day, lowestHalfHour);
    assert.equal(packed.minutes.toString('hex'), HEART_MINUTES[key], `${name}: today's encoder writes the same bytes`);
    assert.equal(packed.hours.toString('hex'), HEART_HOURS[key], name);
    assert.equal(packed.total, HEART_TOTALS[key], name);
  }
});

it('reads sleep stages as the former encoder wrote them, in each unit', () => {
  for (const [name, night] of Object.entries(nights)) {
    const hex = STAGES[name as keyof typeof STAGES];
    assert.deepEqual(unpackStages(NIGHT_START, bytes(hex)), stagesOf(night), name);
    assert.equal(packStages(stagesOf(night)).toString('hex'), hex, name);
  }
});
