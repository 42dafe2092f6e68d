import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../../infra/database/pg-errors';
import { GATEWAY_CODES, GatewayError, gatewayValidationCode, VerbatimHttpError } from './gateway-error';

/** How long a client is asked to wait while the database is away. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Renders every error in the shape of the interface the route belongs to:
 * - wallet service (`/api/...`): `{status, message, code: "HttpException"}`, `message` an array for validation;
 * - gateway (`/v1`, `/v2`, `/transactions/acknowledge`): `{status_code, status_description, message}`, and the
 *   documents' own 401 body;
 * - anything else (health, docs) keeps the body its library produced.
 * Anything unexpected is logged and answered as a 500 without internals.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const { status, body } = errorResponse(exception, request.url);
    if (status >= 500) {
      this.logger.error({ err: loggable(exception), url: request.url.split('?')[0] }, 'unhandled error');
    }
    if (status === HttpStatus.SERVICE_UNAVAILABLE) void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    // JSON even on routes that answer HTML or text when they succeed.
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }
}

/** The status and body of an error on this URL, in its interface's shape; also used for errors Fastify raises itself. */
export function errorResponse(exception: unknown, url: string): { status: number; body: unknown } {
  const { status, message } = describe(exception);
  if (isGatewayRoute(url)) return { status, body: gatewayBody(exception, status, message) };
  if (!url.startsWith('/api/') && exception instanceof HttpException && typeof exception.getResponse() === 'object') {
    return { status, body: exception.getResponse() };
  }
  return { status, body: { status, message, code: 'HttpException' } };
}

export function isGatewayRoute(url: string): boolean {
  return url.startsWith('/v1/') || url.startsWith('/v2/') || url.startsWith('/transactions/acknowledge');
}

function gatewayBody(exception: unknown, status: number, message: string | string[]): Record<string, unknown> {
  if (exception instanceof GatewayError) return exception.body();
  if (exception instanceof VerbatimHttpError) return exception.verbatimBody;
  if (status === 401 && exception instanceof HttpException && typeof exception.getResponse() === 'object') {
    return exception.getResponse() as Record<string, unknown>;
  }
  const text = Array.isArray(message) ? message.join('; ') : message;
  if (status === 404) return { status_code: GATEWAY_CODES.NOT_FOUND, status_description: 'Transaction not found', message: text };
  if (status === HttpStatus.SERVICE_UNAVAILABLE) {
    return { status_code: GATEWAY_CODES.FAILURE, status_description: 'Service unavailable', message: text };
  }
  if (status >= 500) return { status_code: GATEWAY_CODES.FAILURE, status_description: 'Generic failure', message: 'Internal server error' };
  const first = Array.isArray(message) ? (message[0] ?? '') : message;
  const { code, description } = gatewayValidationCode(first);
  return { status_code: code, status_description: description, message: text };
}

export function describe(exception: unknown): { status: number; message: string | string[] } {
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const message = typeof body === 'string' ? body : ((body as { message?: string | string[] }).message ?? exception.message);
    return { status, message };
  }
  if (isDatabaseUnavailable(exception)) {
    return { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'The service is temporarily unavailable; retry later' };
  }
  // Errors raised by Fastify itself before a route runs: invalid JSON, wrong content type, body too large.
  const fastifyError = exception as { statusCode?: number; code?: string; message?: string };
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return { status: fastifyError.statusCode, message: fastifyMessage(fastifyError) };
  }
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, message: 'Internal server error' };
}

function fastifyMessage(error: { code?: string; message?: string }): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Content-Type must be application/json';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is empty';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is too large';
    case 'FST_ERR_BAD_URL':
      return 'The request path is not validly %-encoded';
    default:
      return error.code?.startsWith('FST_ERR_CTP') || error.message?.includes('JSON') ? 'Request body is not valid JSON' : (error.message ?? 'Bad request');
  }
}

/**
 * What of an unexpected error goes to the log: its kind, message, code and stack. Not its other fields: a
 * TypeORM QueryFailedError carries the query's parameters (payer data, secrets).
 */
function loggable(exception: unknown): Record<string, unknown> {
  if (!(exception instanceof Error)) return { message: String(exception) };
  return { type: exception.name, message: exception.message, code: (exception as { code?: unknown }).code, stack: exception.stack };
}
