import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from './pg-errors';
import { GATEWAY_CODES, GatewayError } from './gateway-error';
import { RequestValidationError } from './request-validation.error';
import { TooManyRequests } from './too-many-requests';

export type Rendered = { status: number; message: string | string[] };

/** How long a client is asked to wait while the database is away (pages that answer HTML send it too). */
export const RETRY_AFTER_SECONDS = 5;

/**
 * Renders every error of a route in the shape of the interface it belongs to; each interface's filter is bound
 * to its controllers (wallet and gateway controller decorators, the statement and hosted-page controllers).
 * Anything unexpected is logged and answered as a 500 without internals.
 */
abstract class InterfaceErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const described = describeError(exception);
    sendError(reply, request.url, exception, described.status, this.body(exception, described, request.url));
  }

  protected abstract body(exception: unknown, described: Rendered, url: string): unknown;
}

const logger = new Logger('Errors');

/**
 * Every error answer leaves through here, whichever interface shaped its body (the filters below, the payout and
 * airtime filters, Fastify's own errors): JSON even on routes that answer HTML or text when they succeed,
 * `Retry-After` while the database is away and on a 429 (TooManyRequests), and unexpected errors logged without
 * the query string.
 */
export function sendError(reply: FastifyReply, url: string, exception: unknown, status: number, body: unknown): void {
  if (status >= 500) logger.error({ err: loggable(exception), url: url.split('?')[0] }, 'unhandled error');
  if (status === HttpStatus.SERVICE_UNAVAILABLE) void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  if (exception instanceof TooManyRequests) void reply.header('retry-after', String(exception.retryAfterSeconds));
  void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
}

/** Wallet service (`/api/v1`): `{status, message, code: "HttpException"}`, `message` an array for validation. */
@Catch()
export class WalletErrorFilter extends InterfaceErrorFilter {
  protected body(_exception: unknown, described: Rendered): unknown {
    return walletBody(described);
  }
}

/** Gateways: `{status_code, status_description, message}` (plus extras), and the documents' own 401 body. */
@Catch()
export class GatewayErrorFilter extends InterfaceErrorFilter {
  protected body(exception: unknown, described: Rendered): unknown {
    return gatewayBody(exception, described);
  }
}

/**
 * POST /v1/statement: its validation errors, bodies refused before it runs and failures (the database away) have
 * the statement's own shape (collection document §9.3); authentication and the rest are gateway errors.
 */
@Catch()
export class PaymentStatementErrorFilter extends InterfaceErrorFilter {
  protected body(exception: unknown, described: Rendered): unknown {
    if (exception instanceof RequestValidationError) {
      const [first] = exception.problems;
      return statementBody(400, first?.message ?? 'Request body is invalid', first?.context.statementErrorCode ?? 'INVALID_REQUEST');
    }
    if (described.status >= 500) return statementBody(described.status, failureMessage(described), 'FAILED');
    return gatewayBody(exception, described);
  }
}

export const STATEMENT_EARLY_REFUSAL: EarlyRefusalBody = {
  prefix: '/v1/statement',
  body: (message, status) => statementBody(status, message, 'INVALID_REQUEST'),
};

function statementBody(status: number, description: string, errorCode: string): Record<string, unknown> {
  return { response_code: status, response_description: description, error_code: errorCode };
}

/** What a 5xx says: the outage's own words (retry later), never an internal error's. */
function failureMessage(described: Rendered): string {
  return described.status === HttpStatus.SERVICE_UNAVAILABLE ? String(described.message) : 'Internal server error';
}

/** The payer's hosted pages and their JSON endpoints: Nest's own body, with a single message a page can show. */
@Catch()
export class HostedPageErrorFilter extends InterfaceErrorFilter {
  protected body(exception: unknown, described: Rendered): unknown {
    return hostedPageBody(exception, described);
  }
}

/** A hosted-page request refused before its route ran (not JSON, too large) gets the hosted pages' body. */
export const HOSTED_PAGE_EARLY_REFUSAL: EarlyRefusalBody = {
  prefix: '/checkout/',
  body: (message, status) => nestBody(status, message),
};

function hostedPageBody(exception: unknown, described: Rendered): unknown {
  if (exception instanceof RequestValidationError) return nestBody(400, exception.problems[0]?.message ?? 'Request body is invalid');
  const response = exception instanceof HttpException ? exception.getResponse() : null;
  // One message, as the page shows it: a refusal listing several (NUL, invalid Unicode) gives them joined.
  const message = response && typeof response === 'object' && 'message' in response ? response.message : described.message;
  return nestBody(described.status, Array.isArray(message) ? message.join('; ') : String(message));
}

/** Nest's own error body: `{statusCode, message, error}`, `error` the status's reason phrase. */
function nestBody(status: number, message: string): Record<string, unknown> {
  const reason = HttpStatus[status] as string | undefined;
  const error =
    reason
      ?.split('_')
      .map((word) => word[0] + word.slice(1).toLowerCase())
      .join(' ') ?? 'Error';
  return { statusCode: status, message, error };
}

/**
 * A route family whose requests refused before the route runs (a body that is not JSON, or too large) are answered
 * in the family's own body: its route filter never sees them. Each domain gives its own; the fallback only knows
 * their prefixes.
 */
export interface EarlyRefusalBody {
  prefix: string;
  body(message: string, status: number): unknown;
}

/**
 * The global fallback, for errors raised before any controller runs (unknown routes, unreadable bodies) and for
 * routes of no interface (health, metrics): no controller to ask, so the path tells the shape.
 */
@Catch()
export class FallbackErrorFilter extends InterfaceErrorFilter {
  constructor(private readonly earlyRefusals: EarlyRefusalBody[]) {
    super();
  }

  protected body(exception: unknown, described: Rendered, url: string): unknown {
    return fallbackBody(exception, described, url, this.earlyRefusals);
  }
}

/** The status and fallback-shaped body of an error on this URL; for errors Fastify and Node raise before any route runs. */
export function errorResponse(exception: unknown, url: string, earlyRefusals: EarlyRefusalBody[]): { status: number; body: unknown } {
  const described = describeError(exception);
  return {
    status: described.status,
    body: fallbackBody(exception, described, url, earlyRefusals),
  };
}

/** Answers an error raised before any route runs (Fastify's own), exactly as the fallback filter would. */
export function sendFallbackError(reply: FastifyReply, exception: unknown, url: string, earlyRefusals: EarlyRefusalBody[]): void {
  const { status, body } = errorResponse(exception, url, earlyRefusals);
  sendError(reply, url, exception, status, body);
}

function fallbackBody(exception: unknown, described: Rendered, url: string, earlyRefusals: EarlyRefusalBody[]): unknown {
  const refusedEarly =
    described.status === HttpStatus.BAD_REQUEST || described.status === HttpStatus.PAYLOAD_TOO_LARGE
      ? earlyRefusals.find((family) => url.startsWith(family.prefix))
      : undefined;
  if (refusedEarly) {
    const [first] = Array.isArray(described.message) ? described.message : [described.message];
    return refusedEarly.body(first, described.status);
  }
  if (isGatewayRoute(url)) return gatewayBody(exception, described);
  if (url.startsWith('/api/')) return walletBody(described);
  return libraryBody(exception, described);
}

/** Gateway paths (collection and disbursement); the fallback and the gateway rate limit tell them by path. */
export function isGatewayRoute(url: string): boolean {
  return url.startsWith('/v1/') || url.startsWith('/v2/') || url.startsWith('/transactions/acknowledge');
}

function walletBody({ status, message }: Rendered): Record<string, unknown> {
  return { status, message, code: 'HttpException' };
}

/** The body its library produced (Nest's `{statusCode, message, error}`), else the wallet shape. */
function libraryBody(exception: unknown, described: Rendered): unknown {
  if (exception instanceof HttpException && typeof exception.getResponse() === 'object') return exception.getResponse();
  return walletBody(described);
}

function gatewayBody(exception: unknown, { status, message }: Rendered): Record<string, unknown> {
  if (exception instanceof GatewayError) return exception.body();
  if (status === 401 && exception instanceof HttpException && typeof exception.getResponse() === 'object') {
    return exception.getResponse() as Record<string, unknown>;
  }
  if (exception instanceof RequestValidationError) return gatewayValidationBody(exception);
  const text = Array.isArray(message) ? message.join('; ') : message;
  if (status === 404)
    return {
      status_code: GATEWAY_CODES.NOT_FOUND,
      status_description: 'Transaction not found',
      message: text,
    };
  if (status === HttpStatus.SERVICE_UNAVAILABLE) {
    return {
      status_code: GATEWAY_CODES.FAILURE,
      status_description: 'Service unavailable',
      message: text,
    };
  }
  if (status >= 500)
    return {
      status_code: GATEWAY_CODES.FAILURE,
      status_description: 'Generic failure',
      message: 'Internal server error',
    };
  return {
    status_code: GATEWAY_CODES.VALIDATION,
    status_description: 'Validation Failed',
    message: text,
  };
}

/** The code of the first failed rule (its decorator's context), every distinct message, and any echoed field. */
function gatewayValidationBody(exception: RequestValidationError): Record<string, unknown> {
  const gateway = exception.problems[0]?.context.gateway;
  const body: Record<string, unknown> = {
    status_code: gateway?.code ?? GATEWAY_CODES.VALIDATION,
    status_description: gateway?.description ?? 'Validation Failed',
    message: [...new Set(exception.problems.map((p) => p.message))].join('; ') || 'Request body is invalid',
  };
  if (gateway?.echo) {
    const value = (exception.target as Record<string, unknown> | undefined)?.[gateway.echo.field];
    body[gateway.echo.as] = typeof value === 'string' ? value : '';
  }
  return body;
}

/** The status an error is answered with, and its message (an array for validation). */
export function describeError(exception: unknown): Rendered {
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const message = typeof body === 'string' ? body : ((body as { message?: string | string[] }).message ?? exception.message);
    return { status, message };
  }
  if (isDatabaseUnavailable(exception)) {
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      message: 'The service is temporarily unavailable; retry later',
    };
  }
  // Errors raised by Fastify itself before a route runs: invalid JSON, wrong content type, body too large.
  const fastifyError = exception as {
    statusCode?: number;
    code?: string;
    message?: string;
  };
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return {
      status: fastifyError.statusCode,
      message: fastifyMessage(fastifyError),
    };
  }
  return {
    status: HttpStatus.INTERNAL_SERVER_ERROR,
    message: 'Internal server error',
  };
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
      return error.code?.startsWith('FST_ERR_CTP') || error.message?.includes('JSON')
        ? 'Request body is not valid JSON'
        : (error.message ?? 'Bad request');
  }
}

/**
 * What of an unexpected error goes to the log: its kind, message, code and stack. Not its other fields: a
 * TypeORM QueryFailedError carries the query's parameters (payer data, secrets).
 */
function loggable(exception: unknown): Record<string, unknown> {
  if (!(exception instanceof Error)) return { message: String(exception) };
  return {
    type: exception.name,
    message: exception.message,
    code: (exception as { code?: unknown }).code,
    stack: exception.stack,
  };
}
