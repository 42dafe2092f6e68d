import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Renders errors in the wallet-service shape `{status, message, code: "HttpException"}` (provider contract
 * §4). Validation errors keep `message` as an array. Anything unexpected is logged and answered as a bare 500
 * without internals.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const { status, message } = describe(exception);
    if (status >= 500) {
      this.logger.error({ err: exception, url: request.url }, 'unhandled error');
    }
    // Health checks and other non-merchant routes keep the body their library produced.
    if (!request.url.startsWith('/api/') && exception instanceof HttpException && typeof exception.getResponse() === 'object') {
      void reply.status(status).send(exception.getResponse());
      return;
    }
    void reply.status(status).send({ status, message, code: 'HttpException' });
  }
}

export function describe(exception: unknown): { status: number; message: string | string[] } {
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
      return error.code?.startsWith('FST_ERR_CTP') || error.message?.includes('JSON') ? 'Request body is not valid JSON' : (error.message ?? 'Bad request');
  }
}
