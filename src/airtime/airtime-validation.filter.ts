import { ArgumentsHost, BadRequestException, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe } from '../common/errors/http-error.filter';
import { airtimeRejection } from './airtime';

/**
 * Airtime answers a malformed request in the payout-family body (721 Validation Failed, document §7) instead of
 * the collection gateway's 172. The reference is echoed when the request carried a usable one.
 */
@Catch(BadRequestException)
export class AirtimeValidationFilter implements ExceptionFilter {
  catch(exception: BadRequestException, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { message } = describe(exception);
    const messages = Array.isArray(message) ? message : [message];
    const reference = (request.body as { reference?: unknown } | undefined)?.reference;
    const rejection = airtimeRejection(
      typeof reference === 'string' && reference.length <= 64 ? reference : null,
      messages.some((m) => /phone_number/.test(m)) ? 'INVALID_PHONE_NUMBER' : 'VALIDATION_FAILED',
      messages.slice(0, 10).join('; ') + (messages.length > 10 ? `; and ${messages.length - 10} more` : ''),
    );
    void reply.status(rejection.getStatus()).send(rejection.verbatimBody);
  }
}
