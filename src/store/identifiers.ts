/**
 * The shape of each kind of id a request can name, as Stride makes it. A value of any other shape
 * names nothing, so it is never looked up and the route answers it as it answers an id it does not
 * know: PostgreSQL refuses a NUL in a text value, so a statement given one would fail (a 500), and
 * a statement batched with other requests' would fail for all of them. The stores check an id that
 * comes from outside here before it reaches a statement. (The ids of sleep sessions and weight
 * measurements are parsed instead, record-ids.ts; credentials reach the database only hashed.)
 */

/** crypto.randomUUID(): lowercase hex in 8-4-4-4-12. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const SHAPES = {
  /**
   * RFC 6749 Appendix A.1: a client id is visible ASCII and spaces (VSCHAR). Stride makes 32 hex
   * digits (security/secrets.ts), but nothing narrower than the RFC's syntax is assumed of one.
   */
  client: /^[\x20-\x7e]{1,255}$/,
  /** An app's own id (domain/apps.ts), apart from its client id. */
  app: UUID,
  /** An account's id (domain/users.ts), a test person's too (domain/test-people.ts). */
  user: UUID,
  /**
   * `we_` and 12 random bytes in base64url (webhooks.ts), or, for an endpoint added on the
   * dashboard, `we_` and 24 hex digits of the form's HMAC (web/pages/webhooks.ts).
   */
  webhookEndpoint: /^we_(?:[A-Za-z0-9_-]{16}|[0-9a-f]{24})$/,
  /** A delivery is named by its message's id (events.ts): `msg_` and 32 hex digits. */
  webhookDelivery: /^msg_[0-9a-f]{32}$/,
  /** A session is named, on the account page, by the SHA-256 of its credential in hex. */
  session: /^[0-9a-f]{64}$/,
  /** A Takeout import (takeout-imports.ts): `imp_` and 12 random bytes in base64url. */
  takeoutImport: /^imp_[A-Za-z0-9_-]{16}$/,
} as const;

export type IdKind = keyof typeof SHAPES;

/** Whether `value` could be an id of `kind`; anything else names nothing of that kind. */
export function isId(kind: IdKind, value: string): boolean {
  return SHAPES[kind].test(value);
}
