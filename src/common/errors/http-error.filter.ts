import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GATEWAY_CODES, GatewayError } from './gateway-error';
import { RequestValidationError } from './request-validation.error';

type Rendered = { status: number; message: string | string[] };

/**
 * Renders every error of a route in the shape of the interface it belongs to; each interface's filter is bound
 * to its controllers (wallet and gateway controller decorators, the statement and hosted-page controllers).
 * Anything unexpected is logged and answered as a 500 without internals.
 */
abstract class InterfaceErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const described = describe(exception);
    if (described.status >= 500) this.logger.error({ err: exception, url: request.url }, 'unhandled error');
    void reply.status(described.status).send(this.body(exception, described, request));
  }

  protected abstract body(exception: unknown, described: Rendered, request: FastifyRequest): unknown;
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

/** POST /v1/statement: its validation errors have a shape of their own; anything else is a gateway error. */
@Catch()
export class PaymentStatementErrorFilter extends InterfaceErrorFilter {
  protected body(exception: unknown, described: Rendered): unknown {
    if (!(exception instanceof RequestValidationError)) return gatewayBody(exception, described);
    const [first] = exception.problems;
    return {
      response_code: 400,
      response_description: first?.message ?? 'Request body is invalid',
      error_code: first?.context.statementErrorCode ?? 'INVALID_REQUEST',
    };
  }
}

/** The payer's hosted pages and their JSON endpoints: Nest's own body, with a single message a page can show. */
@Catch()
export class HostedPageErrorFilter extends InterfaceErrorFilter {
  protected body(exception: unknown, described: Rendered): unknown {
    if (exception instanceof RequestValidationError)
      return { message: exception.problems[0]?.message, error: 'Bad Request', statusCode: 400 };
    return libraryBody(exception, described);
  }
}

/**
 * The global fallback, for errors raised before any controller runs (unknown routes, unreadable bodies) and for
 * routes of no interface (health, metrics): no controller to ask, so the path tells the shape.
 */
@Catch()
export class FallbackErrorFilter extends InterfaceErrorFilter {
  protected body(exception: unknown, described: Rendered, request: FastifyRequest): unknown {
    if (isGatewayPath(request.url)) return gatewayBody(exception, described);
    if (request.url.startsWith('/api/')) return walletBody(described);
    return libraryBody(exception, described);
  }
}

function isGatewayPath(url: string): boolean {
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
  if (status === 404) return { status_code: GATEWAY_CODES.NOT_FOUND, status_description: 'Transaction not found', message: text };
  if (status >= 500) return { status_code: GATEWAY_CODES.FAILURE, status_description: 'Generic failure', message: 'Internal server error' };
  return { status_code: GATEWAY_CODES.VALIDATION, status_description: 'Validation Failed', message: text };
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

function describe(exception: unknown): Rendered {
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const message = typeof body === 'string' ? body : ((body as { message?: string | string[] }).message ?? exception.message);
    return { status, message };
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
    default:
      return error.code?.startsWith('FST_ERR_CTP') || error.message?.includes('JSON')
        ? 'Request body is not valid JSON'
        : (error.message ?? 'Bad request');
  }
}
