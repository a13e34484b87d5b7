/**
 * Answers to connections whose request never reached a route: Node's HTTP parser refused it
 * (malformed, headers too large) or the request did not arrive within REQUEST_TIMEOUT. Fastify's
 * own answer has its own JSON shape; this one has the error shape of every other answer, then
 * closes the connection (RFC 9110 §15.5.9: a 408 closes it).
 */
import type { FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';

interface ClientError extends Error {
  code?: string;
}

function answerFor(error: ClientError, timeoutSeconds: number): { status: string; body: string } {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: '408 Request Timeout',
        body: JSON.stringify({ error: 'invalid_request', error_description: `the request did not arrive within ${timeoutSeconds} s` }),
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: '431 Request Header Fields Too Large',
        body: JSON.stringify({ error: 'invalid_request', error_description: 'the request headers are too large' }),
      };
    default:
      return {
        status: '400 Bad Request',
        body: JSON.stringify({ error: 'invalid_request', error_description: 'the request is not valid HTTP/1.1' }),
      };
  }
}

/** Fastify's `clientErrorHandler`; `requestTimeoutMs` is named in the 408 answer. */
export function clientErrorHandler(requestTimeoutMs: number) {
  return function handleClientError(this: FastifyInstance, error: ClientError, socket: Socket): void {
    // A reset connection is gone already: nothing to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    this.log.debug({ err: error }, 'client error');
    // Bytes of an answer already under way cannot be followed by another one: only close.
    const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inProgress?.headersSent) {
      const { status, body } = answerFor(error, requestTimeoutMs / 1000);
      socket.write(
        `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
