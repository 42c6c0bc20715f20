// Answers to requests Node refuses before Fastify sees them (malformed request line, headers too large or too
// slow, an unknown method): the same JSON envelope as every other refusal, then the connection is closed.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { type AppError, refuse } from '../errors.js';
import { failBody } from '../rest/envelope.js';

/** The refusal for a client error Node's HTTP parser reports (`err.code`). */
export function clientErrorRefusal(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return refuse('headers_too_large', 'The request headers are larger than the server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return refuse('request_timeout', 'The request took too long to arrive.');
    case 'HPE_INVALID_METHOD':
      return refuse('method_not_allowed', 'The request method is not one this API serves.');
    default:
      return refuse('invalid_request', 'The request is not well-formed HTTP.');
  }
}

/** Fastify's clientErrorHandler: writes the envelope on the raw socket (there is no reply object yet). */
export function answerClientError(error: Error & { code?: string }, socket: Socket) {
  // A reset connection has nobody left to answer (Node's own rule for clientError).
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = clientErrorRefusal(error.code);
  const body = JSON.stringify(failBody(refusal));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        'Cache-Control: no-store\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}
