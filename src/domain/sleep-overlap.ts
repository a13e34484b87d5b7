/**
 * One sleep at a time (docs/api.md, "Sleep"): a person's sessions never overlap, and a session sent
 * with the start of a stored one replaces it rather than overlapping it.
 *
 * A rule of the domain that needs nothing else: .dependency-cruiser.cjs places this module in the
 * foundation layer, so that the sleep store's save and import, `stride import` and the sandbox's
 * made-up nights all apply this same rule.
 */

/** A session's span, [start_time, end_time) in Unix seconds. */
export interface SessionSpan {
  start_time: number;
  end_time: number;
}

/** Whether the two sessions share an instant. */
export function sessionsOverlap(a: SessionSpan, b: SessionSpan): boolean {
  return a.start_time < b.end_time && b.start_time < a.end_time;
}

/** Whether `session` is refused for the stored session `stored`: they overlap, and `session` does not replace it. */
export function overlapsStored(session: SessionSpan, stored: SessionSpan): boolean {
  return stored.start_time !== session.start_time && sessionsOverlap(session, stored);
}
