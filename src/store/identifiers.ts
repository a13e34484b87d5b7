/**
 * RFC 6749 Appendix A.1: a client id is visible ASCII and spaces (VSCHAR); app ids are too. Nothing
 * else names an app, so nothing else is looked up — PostgreSQL refuses a NUL in a text value, and
 * a statement batched with other requests' would fail for all of them.
 */
export function isClientIdSyntax(clientId: string): boolean {
  return /^[\x20-\x7e]{1,255}$/.test(clientId);
}

export const isAppIdSyntax = isClientIdSyntax;
