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
  // RFC 8628: a device's code while it waits; whoever types it first connects that device.
  'user_code',
]);

/** Parameters whose value is a local URL with a query of its own: the sign-in pages' way back. */
const NESTED_URL_PARAMETERS = new Set(['return_to']);

/** `url` with the values of credential parameters replaced by `[redacted]`, in a way back too. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question < 0) return url;
  const query = url.slice(question + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=');
    if (equals < 0) return pair;
    const rawName = pair.slice(0, equals);
    const name = (decoded(rawName) ?? rawName).toLowerCase();
    if (SECRET_PARAMETERS.has(name)) return `${rawName}=[redacted]`;
    if (!NESTED_URL_PARAMETERS.has(name)) return pair;
    const value = decoded(pair.slice(equals + 1));
    if (value === undefined) return pair;
    const redacted = redactUrl(value);
    return redacted === value ? pair : `${rawName}=${encodeURIComponent(redacted)}`;
  });
  return `${url.slice(0, question)}?${query.join('&')}`;
}

/** A query component decoded as a form does (`+` is a space); undefined when it is not valid. */
function decoded(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
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
