import { ArgumentsHost, BadRequestException, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describeError, EarlyRefusalBody, GatewayErrorFilter, sendError } from '../common/errors/http-error.filter';
import { RequestValidationError, ValidationProblem } from '../common/errors/request-validation.error';
import { PayoutError, PayoutErrorCode, ReferenceField } from './payout-error';

/** A payout request refused before its route ran (not JSON, too large) gets the payout family's 721 body. */
export const PAYOUT_EARLY_REFUSAL: EarlyRefusalBody = {
  prefix: '/v1/payouts/',
  body: (message) => PayoutError.rejected('VALIDATION_FAILED', `Validation Failed: ${message}`).body('payout_reference'),
};

/**
 * Bound to the disbursement controllers: payout-family errors and bad bodies are answered in the payout error body
 * (a bad body is 721 with the error_code its first broken rule carries in `context`, VALIDATION_FAILED otherwise),
 * and so are failures (503 while the database is away, 500), as 721 with error_code FAILED, the document's generic
 * outage; authentication and other HTTP errors are left to the gateway's filter.
 */
@Catch()
export class PayoutErrorFilter implements ExceptionFilter {
  protected readonly referenceField: ReferenceField = 'payout_reference';
  /** What the body says when the request carried no usable reference: payouts leave the field out. */
  protected readonly unknownReference: null | undefined = undefined;
  private readonly fallback = new GatewayErrorFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const error = this.asPayoutError(exception);
    if (error)
      return sendError(reply, request.url, error, error.getStatus(), error.body(this.referenceField, this.referenceOf(request.body)));
    const { status, message } = describeError(exception);
    if (status < 500) return this.fallback.catch(exception, host);
    const description = status === 503 ? 'Service unavailable' : 'Internal server error';
    const failure = PayoutError.rejected('FAILED', description, undefined, status === 503 ? String(message) : undefined);
    sendError(reply, request.url, exception, status, failure.body(this.referenceField, this.referenceOf(request.body)));
  }

  /** A bad body: the payout answers name the first broken rule in the description. */
  protected invalidBody(problems: ValidationProblem[]): PayoutError {
    const first = problems[0];
    return PayoutError.rejected(errorCodeOf(first), `Validation Failed: ${first?.message ?? 'request body is invalid'}`);
  }

  private asPayoutError(exception: unknown): PayoutError | null {
    if (exception instanceof PayoutError) return exception;
    if (exception instanceof RequestValidationError) return this.invalidBody(exception.problems);
    if (exception instanceof BadRequestException) {
      const message = (exception.getResponse() as { message?: string | string[] }).message;
      return this.invalidBody([
        {
          message: Array.isArray(message) ? message[0] : (message ?? 'request body is invalid'),
          context: {},
        },
      ]);
    }
    return null;
  }

  /** The request's reference when it sent a usable one, so a rejection can name it. */
  private referenceOf(body: unknown): string | null | undefined {
    const reference = (body as Record<string, unknown> | null)?.[this.referenceField];
    return typeof reference === 'string' && reference.length <= 64 ? reference : this.unknownReference;
  }
}

export function errorCodeOf(problem: ValidationProblem | undefined): PayoutErrorCode {
  return (problem?.context.payoutErrorCode as PayoutErrorCode | undefined) ?? 'VALIDATION_FAILED';
}
