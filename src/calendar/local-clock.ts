/**
 * Readings of a local clock — a wall-clock time written without a zone, as a Fitbit archive
 * writes them — turned into UTC instants in a time zone. Around a change of clocks a reading may
 * name no instant (the hour skipped when clocks go forward) or two (the hour repeated when they
 * go back); a reader of a time-ordered list of readings takes, of two, the first that does not go
 * back in time, so a night across the change keeps its order.
 *
 * Offsets come from the cached spans of step-buckets.ts: converting a reading is arithmetic once
 * the reader holds the span it falls in, which matters for the millions of readings of a
 * heart-rate history.
 */
import { offsetSpans, type OffsetSpan } from './step-buckets.js';

/** Seconds since 1970-01-01T00:00 of the local clock (as if it were UTC). */
export type LocalSeconds = number;

/** What a reading of the clock names. */
export type LocalInstant =
  | { utc: number }
  /** The clocks jumped over this reading: no instant shows it. */
  | { skipped: true };

/** The local seconds of a calendar date and time (month 1–12). */
export function localSeconds(year: number, month: number, day: number, hour: number, minute: number, second: number): LocalSeconds {
  return Date.UTC(year, month - 1, day, hour, minute, second) / 1000;
}

/** The local date (days since 1970-01-01) of local seconds. */
export function localDayNumber(local: LocalSeconds): number {
  return Math.floor(local / 86_400);
}

/** YYYY-MM-DD of a day number. */
export function isoDateOfDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** Spans looked up around a reading: a little more than the longest gap between two changes matters. */
const LOOKUP_MARGIN = 3 * 86_400;

/**
 * Reads local times of `zone` in order. `at(local)` answers the instant a reading names; of two
 * (a repeated hour), the earlier unless it would be before the last instant this reader answered
 * (then the later). `restart()` forgets the last instant (a new list of readings).
 */
export class LocalClockReader {
  /** The span the last reading fell in: [localFrom, localTo) reads as local − offset. */
  private localFrom = Infinity;
  private localTo = -Infinity;
  private offset = 0;
  private last = -Infinity;

  constructor(readonly zone: string) {}

  restart(): void {
    this.last = -Infinity;
  }

  at(local: LocalSeconds): LocalInstant {
    if (local >= this.localFrom && local < this.localTo) return this.answer(local - this.offset);
    return this.lookUp(local);
  }

  private answer(utc: number): LocalInstant {
    this.last = utc;
    return { utc };
  }

  /** The instants the reading names, from the zone's spans; remembers a span the reading is unambiguous in. */
  private lookUp(local: LocalSeconds): LocalInstant {
    const spans = offsetSpans(this.zone, local - LOOKUP_MARGIN, local + LOOKUP_MARGIN);
    const instants: number[] = [];
    for (let i = 0; i < spans.length; i++) {
      const span = spans[i]!;
      const end = spans[i + 1]?.start ?? Infinity;
      const utc = local - span.offset;
      if (utc >= span.start && utc < end) instants.push(utc);
    }
    if (instants.length === 0) return { skipped: true };
    if (instants.length === 1) {
      this.remember(spans, instants[0]!);
      return this.answer(instants[0]!);
    }
    // A repeated hour: never cache it, so each of its readings is decided by the order rule.
    const [earlier, later] = [Math.min(...instants), Math.max(...instants)];
    return this.answer(earlier >= this.last ? earlier : later);
  }

  /** Keeps the local range in which `utc`'s span is the only reading, so later readings in it are arithmetic. */
  private remember(spans: readonly OffsetSpan[], utc: number): void {
    const index = spans.findIndex((span, i) => utc >= span.start && utc < (spans[i + 1]?.start ?? Infinity));
    const span = spans[index]!;
    const previous = spans[index - 1];
    const next = spans[index + 1];
    // The local range of this span, less any part another span's local range also covers.
    let from = span.start + span.offset;
    if (previous) from = Math.max(from, previous.offset + span.start);
    let to = next ? next.start + span.offset : Infinity;
    if (next) to = Math.min(to, next.start + next.offset);
    // Beyond the looked-up window the spans are unknown: stay inside it.
    if (!previous) from = Math.max(from, utc + span.offset - LOOKUP_MARGIN + 86_400);
    if (!next) to = Math.min(to, utc + span.offset + LOOKUP_MARGIN - 86_400);
    this.localFrom = from;
    this.localTo = to;
    this.offset = span.offset;
  }
}
