/**
 * Request logging without credentials. Access logs keep the query string (it explains most
 * requests), but an authorization code or token in a URL (an app's callback, a misused API call)
 * must not reach the logs: its value is replaced.
 */
import type { FastifyRequest } from 'fastify';

const SECRET_PARAMETERS = new Set([
  'code', 'code_verifier', 'access_token', 'refresh_token', 'token', 'client_secret', 'password', 'csrf_token',
  // RFC 9126: a pushed request's handle, usable once by whoever presents it first.
  'request_uri',
]);

/** `url` with the values of credential parameters replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question < 0) return url;
  const query = url.slice(question + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=');
    const rawName = equals < 0 ? pair : pair.slice(0, equals);
    let name = rawName;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      // keep the raw name
    }
    return SECRET_PARAMETERS.has(name.toLowerCase()) && equals >= 0 ? `${rawName}=[redacted]` : pair;
  });
  return `${url.slice(0, question)}?${query.join('&')}`;
}

/** Fastify's own request serializer, with the URL redacted. */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
