/**
 * What a data event says changed (docs/webhooks.md, "What a data event says"): the local `dates` it
 * touched, ascending, and per date one range covering what changed on it — `ranges[i]` is the range
 * of `dates[i]`. An event so grows with the dates a change touched, never with the shape of the
 * data: a day of sparse steps is one or two dates and as many ranges, where a range per run of
 * minutes made hundreds.
 *
 * Events written before this shape list a range per run of minutes (more ranges than dates); they
 * stay as they were in the feed, and a waiting message of that shape is joined the old way.
 */

/** A range of a data event, [start_time, end_time) in Unix seconds. */
export interface MinuteRange {
  start_time: number;
  end_time: number;
}

/** A change as an event tells it: its local dates and, for the series and sleep, a range per date. */
export interface DatedChange {
  dates: string[];
  ranges?: MinuteRange[];
}

/** Something that changed on a local date: [start_time, end_time). */
export interface DatedSpan {
  date: string;
  start_time: number;
  end_time: number;
}

/** Per date, one range from the earliest start to the latest end of its spans; dates ascending. */
export function rangesByDate(spans: Iterable<DatedSpan>): { dates: string[]; ranges: MinuteRange[] } {
  const byDate = new Map<string, MinuteRange>();
  for (const { date, start_time, end_time } of spans) {
    const range = byDate.get(date);
    if (range === undefined) byDate.set(date, { start_time, end_time });
    else {
      range.start_time = Math.min(range.start_time, start_time);
      range.end_time = Math.max(range.end_time, end_time);
    }
  }
  const dates = [...byDate.keys()].sort();
  return { dates, ranges: dates.map((date) => byDate.get(date)!) };
}

/** Whether each range is its date's (one per date): every event since ranges were told per date. */
function pairsRangesWithDates(change: DatedChange): change is Required<DatedChange> {
  return change.ranges !== undefined && change.ranges.length === change.dates.length;
}

/**
 * Two changes of one event type as one (a message waiting for its slot joined by an upload, an
 * import's notes): per date, the range covering both. A change of the older shape, a range per run
 * of minutes, is joined as such changes were: dates united, ranges merged where they meet.
 */
export function joinChanges(before: DatedChange | undefined, after: DatedChange): DatedChange {
  if (before === undefined) return after;
  if (pairsRangesWithDates(before) && pairsRangesWithDates(after)) {
    const spans = (change: Required<DatedChange>) => change.dates.map((date, i) => ({ date, ...change.ranges[i]! }));
    return rangesByDate([...spans(before), ...spans(after)]);
  }
  const dates = [...new Set([...before.dates, ...after.dates])].sort();
  if (before.ranges === undefined && after.ranges === undefined) return { dates };
  return { dates, ranges: mergeRanges([...(before.ranges ?? []), ...(after.ranges ?? [])]) };
}

/** Sorted, overlapping or touching ranges joined. */
export function mergeRanges(ranges: readonly MinuteRange[]): MinuteRange[] {
  const sorted = [...ranges].sort((a, b) => a.start_time - b.start_time);
  const merged: MinuteRange[] = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (last && range.start_time <= last.end_time) last.end_time = Math.max(last.end_time, range.end_time);
    else merged.push({ ...range });
  }
  return merged;
}
