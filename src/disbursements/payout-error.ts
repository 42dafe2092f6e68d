import { HttpException } from '@nestjs/common';

/** Response codes of the payout family (disbursement document §7). */
export const PAYOUT_CODES = { ACCEPTED: 720, REJECTED: 721, DUPLICATE: 722, NOT_FOUND: 723 } as const;

/** error_code values of the document §7, plus VALIDATION_FAILED for a field breaking a rule without a code of its own. */
export type PayoutErrorCode =
  | 'INSUFFICIENT_BALANCE'
  | 'SERVICE_NOT_ALLOWED'
  | 'INVALID_DESTINATION_TYPE'
  | 'INVALID_PHONE_NUMBER'
  | 'INVALID_PAYMENT_METHOD'
  | 'INVALID_WALLET'
  | 'RESOURCE_NOT_FOUND'
  | 'DUPLICATE_IGNORED'
  | 'VALIDATION_FAILED';

const HTTP_STATUS = { 721: 400, 722: 409, 723: 404 } as const;

/** An answer of the payout family other than 720: `{payout_reference, response_code, response_description, error_code}`. */
export class PayoutError extends HttpException {
  constructor(
    readonly responseCode: 721 | 722 | 723,
    readonly errorCode: PayoutErrorCode,
    readonly description: string,
    readonly payoutReference?: string,
  ) {
    super(description, HTTP_STATUS[responseCode]);
  }

  /** The reference of the request when the error was raised before it was known (validation, guards). */
  body(requestReference?: string): Record<string, unknown> {
    const reference = this.payoutReference ?? requestReference;
    return {
      ...(reference === undefined ? {} : { payout_reference: reference }),
      response_code: this.responseCode,
      response_description: this.description,
      error_code: this.errorCode,
    };
  }

  static rejected(errorCode: PayoutErrorCode, description: string, payoutReference?: string): PayoutError {
    return new PayoutError(PAYOUT_CODES.REJECTED, errorCode, description, payoutReference);
  }

  static duplicate(payoutReference: string): PayoutError {
    return new PayoutError(PAYOUT_CODES.DUPLICATE, 'DUPLICATE_IGNORED', 'Duplicate ignored: a payout with this payout_reference exists', payoutReference);
  }

  static notFound(payoutReference: string): PayoutError {
    return new PayoutError(PAYOUT_CODES.NOT_FOUND, 'RESOURCE_NOT_FOUND', 'Payout record not found', payoutReference);
  }
}
