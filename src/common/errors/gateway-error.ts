import { HttpException } from '@nestjs/common';

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

  static duplicate(field: string): GatewayError {
    return new GatewayError(409, GATEWAY_CODES.VALIDATION, 'Duplicate Reference', `${field} was already used for a different request`);
  }
}

/** Reads which gateway code a generic validation message deserves: msisdn and currency have codes of their own. */
export function gatewayValidationCode(message: string): { code: number; description: string } {
  if (/^payer_msisdn (should not be empty|must be a string)/.test(message)) {
    return { code: GATEWAY_CODES.MISSING_MSISDN, description: 'Customer msisdn missing' };
  }
  if (/^payer_msisdn /.test(message)) return { code: GATEWAY_CODES.INVALID_MSISDN, description: 'Invalid customer msisdn' };
  if (/^currency_code /.test(message)) return { code: GATEWAY_CODES.INVALID_CURRENCY, description: 'Invalid currency code' };
  return { code: GATEWAY_CODES.VALIDATION, description: 'Validation Failed' };
}

/** An error whose body is given in full, for endpoints with an error shape of their own (payment statement). */
export class VerbatimHttpError extends HttpException {
  constructor(httpStatus: number, readonly verbatimBody: Record<string, unknown>) {
    super(verbatimBody, httpStatus);
  }
}
