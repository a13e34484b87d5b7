/**
 * Every grant type the token endpoint serves, each declared once (docs/oauth.md, "Grant types per
 * app"): the `grant_type` a token request names; the usage count that a token answer of it adds
 * to its app's usage (http/usage.ts); whether a dynamically registered client may name it (RFC 7591
 * §2, docs/decisions/0030-registered-grant-types.md: the device grant is allowed only by its
 * owner); and whether a new app is allowed it without asking. A grant of oauth/grants/ names one
 * of these types (grant.ts).
 *
 * It needs nothing: .dependency-cruiser.cjs places this module in the foundation layer, so that
 * domain/apps.ts and http/usage.ts read the same table as oauth/.
 */

/** RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

export const GRANT_TYPES = [
  { name: 'authorization_code', usage: 'tokens.issued', registrable: true, byDefault: true },
  { name: 'refresh_token', usage: 'tokens.refreshed', registrable: true, byDefault: true },
  { name: DEVICE_CODE_GRANT_TYPE, usage: 'tokens.issued', registrable: false, byDefault: false },
] as const;

export type GrantTypeName = (typeof GRANT_TYPES)[number]['name'];
export type GrantTypeRule = (typeof GRANT_TYPES)[number];

/** The names, in the order apps list them. */
export const GRANT_TYPE_NAMES: readonly GrantTypeName[] = GRANT_TYPES.map((rule) => rule.name);
/** What a new app gets, and what every app could use before grant types were a setting. */
export const DEFAULT_GRANT_TYPES: string[] = GRANT_TYPES.filter((rule) => rule.byDefault).map((rule) => rule.name);
/** What a registration (RFC 7591) may name. */
export const REGISTRABLE_GRANT_TYPES: readonly string[] = GRANT_TYPES.filter((rule) => rule.registrable).map((rule) => rule.name);

/** The declaration of `name`, or undefined for a grant type Stride does not serve. */
export function grantTypeRule(name: unknown): GrantTypeRule | undefined {
  return GRANT_TYPES.find((rule) => rule.name === name);
}
