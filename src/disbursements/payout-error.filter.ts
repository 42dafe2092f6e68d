import { ArgumentsHost, BadRequestException, Catch, ExceptionFilter, ValidationError } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpErrorFilter } from '../common/errors/http-error.filter';
import { RequestValidationError } from '../common/http/validation';
import { PayoutError, PayoutErrorCode } from './payout-error';

/**
 * Bound to the disbursement controllers: payout-family errors and bad bodies are answered in the payout error body
 * (a bad body is 721 with the error_code its rule carries in `context`, VALIDATION_FAILED otherwise); everything
 * else (authentication, internal errors) is left to the application's filter.
 */
@Catch()
export class PayoutErrorFilter implements ExceptionFilter {
  private readonly fallback = new HttpErrorFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const error = asPayoutError(exception);
    if (!error) return this.fallback.catch(exception, host);
    void reply.status(error.getStatus()).send(error.body(referenceOf(request.body)));
  }
}

function asPayoutError(exception: unknown): PayoutError | null {
  if (exception instanceof PayoutError) return exception;
  if (exception instanceof RequestValidationError) {
    const first = firstFailure(exception.errors);
    return PayoutError.rejected(first?.errorCode ?? 'VALIDATION_FAILED', `Validation Failed: ${first?.message ?? 'request body is invalid'}`);
  }
  if (exception instanceof BadRequestException) {
    const message = (exception.getResponse() as { message?: string | string[] }).message;
    return PayoutError.rejected('VALIDATION_FAILED', `Validation Failed: ${Array.isArray(message) ? message[0] : (message ?? 'request body is invalid')}`);
  }
  return null;
}

/** The first broken rule, depth first, with the error_code its decorator carries. */
function firstFailure(errors: ValidationError[], prefix = ''): { message: string; errorCode?: PayoutErrorCode } | null {
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const [constraint, message] = Object.entries(error.constraints ?? {})[0] ?? [];
    if (constraint) {
      const context = error.contexts?.[constraint] as { error_code?: PayoutErrorCode } | undefined;
      return { message: prefix ? `${path}: ${message}` : message, errorCode: context?.error_code };
    }
    const nested = firstFailure(error.children ?? [], path);
    if (nested) return nested;
  }
  return null;
}

/** The request's payout_reference when it sent one, so a rejection can name it. */
function referenceOf(body: unknown): string | undefined {
  const reference = (body as { payout_reference?: unknown } | null)?.payout_reference;
  return typeof reference === 'string' && reference.length <= 64 ? reference : undefined;
}
