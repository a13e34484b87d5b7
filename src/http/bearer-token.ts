/** The token of `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750 §2.1), for every route that takes one. */
import type { FastifyRequest } from 'fastify';

/** null: no Authorization header; '': one that is not a Bearer token. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match ? match[1]! : '';
}
