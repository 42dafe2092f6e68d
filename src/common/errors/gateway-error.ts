import { HttpException } from '@nestjs/common';
import type { ValidationContext } from './request-validation.error';

/** Gateway status codes of the collection document §7. */
export const GATEWAY_CODES = {
  CHARGE_POSTED: 176,
  SUCCESS: 173,
  FAILURE: 174,
  VALIDATION: 172,
  NOT_FOUND: 120,
  INVALID_MSISDN: 110,
  MISSING_MSISDN: 109,
  INVALID_CURRENCY: 115,
} as const;

/** An error answered in the gateway body `{status_code, status_description, message}` (plus extras). */
export class GatewayError extends HttpException {
  constructor(
    httpStatus: number,
    readonly statusCode: number,
    readonly statusDescription: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message, httpStatus);
  }

  body(): Record<string, unknown> {
    return { status_code: this.statusCode, status_description: this.statusDescription, message: this.message, ...this.extra };
  }

  static validation(message: string, extra: Record<string, unknown> = {}): GatewayError {
    return new GatewayError(400, GATEWAY_CODES.VALIDATION, 'Validation Failed', message, extra);
  }

  static notFound(message = 'Transaction not found'): GatewayError {
    return new GatewayError(404, GATEWAY_CODES.NOT_FOUND, 'Transaction not found', message);
  }

  /** The rail that would carry the request is down (its circuit is open): nothing was stored. */
  static unavailable(message: string): GatewayError {
    return new GatewayError(503, GATEWAY_CODES.FAILURE, 'Service unavailable', message);
  }

  static duplicate(field: string): GatewayError {
    return new GatewayError(409, GATEWAY_CODES.VALIDATION, 'Duplicate Reference', `${field} was already used for a different request`);
  }
}

/**
 * Validation contexts (class-validator's `context` option) for fields whose failures have gateway codes of their
 * own; the gateway error filter answers the code of the first failed rule, 172 when it has none.
 */
export const GATEWAY_CONTEXT = {
  missingMsisdn: { gateway: { code: GATEWAY_CODES.MISSING_MSISDN, description: 'Customer msisdn missing' } },
  invalidMsisdn: { gateway: { code: GATEWAY_CODES.INVALID_MSISDN, description: 'Invalid customer msisdn' } },
  invalidCurrency: { gateway: { code: GATEWAY_CODES.INVALID_CURRENCY, description: 'Invalid currency code' } },
} satisfies Record<string, ValidationContext>;

/** The payer's number: missing (109) and malformed (110) are answered apart. */
export const PAYER_MSISDN = { missing: GATEWAY_CONTEXT.missingMsisdn, invalid: GATEWAY_CONTEXT.invalidMsisdn };
