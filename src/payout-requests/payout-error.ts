import { HttpException } from '@nestjs/common';

/** Response codes of the payout family (disbursement document §7). */
export const PAYOUT_CODES = { ACCEPTED: 720, REJECTED: 721, DUPLICATE: 722, NOT_FOUND: 723 } as const;

/**
 * error_code values of the document §7 (FAILED: the generic service outage), plus VALIDATION_FAILED for a field
 * breaking a rule without a code of its own.
 */
export type PayoutErrorCode =
  | 'INSUFFICIENT_BALANCE'
  | 'SERVICE_NOT_ALLOWED'
  | 'INVALID_DESTINATION_TYPE'
  | 'INVALID_PHONE_NUMBER'
  | 'INVALID_PAYMENT_METHOD'
  | 'INVALID_WALLET'
  | 'RESOURCE_NOT_FOUND'
  | 'DUPLICATE_IGNORED'
  | 'VALIDATION_FAILED'
  | 'FAILED';

/** Which request field names the reference in an error body: payouts, IMT and B2B, or airtime. */
export type ReferenceField = 'payout_reference' | 'reference';

const HTTP_STATUS = { 721: 400, 722: 409, 723: 404 } as const;

/**
 * An answer of the payout family other than 720: `{payout_reference | reference, response_code, response_description,
 * error_code}`, plus `message` when the description is a category and the detail is worth saying.
 */
export class PayoutError extends HttpException {
  constructor(
    readonly responseCode: 721 | 722 | 723,
    readonly errorCode: PayoutErrorCode,
    readonly description: string,
    readonly reference?: string,
    readonly detail?: string,
    httpStatus: number = HTTP_STATUS[responseCode],
  ) {
    super(detail ?? description, httpStatus);
  }

  /** `requestReference`: the request's reference when the error was raised before it was known (validation, guards). */
  body(referenceField: ReferenceField, requestReference?: string | null): Record<string, unknown> {
    const reference = this.reference ?? requestReference;
    return {
      ...(reference === undefined ? {} : { [referenceField]: reference }),
      response_code: this.responseCode,
      response_description: this.description,
      error_code: this.errorCode,
      ...(this.detail === undefined ? {} : { message: this.detail }),
    };
  }

  static rejected(errorCode: PayoutErrorCode, description: string, reference?: string, detail?: string): PayoutError {
    return new PayoutError(PAYOUT_CODES.REJECTED, errorCode, description, reference, detail);
  }

  /** The rail that would carry the payout is down (its circuit is open): the generic outage, nothing held. */
  static unavailable(description: string, reference: string): PayoutError {
    return new PayoutError(PAYOUT_CODES.REJECTED, 'FAILED', description, reference, undefined, 503);
  }

  static duplicate(
    reference: string,
    description = 'Duplicate ignored: a payout with this payout_reference exists',
    detail?: string,
  ): PayoutError {
    return new PayoutError(PAYOUT_CODES.DUPLICATE, 'DUPLICATE_IGNORED', description, reference, detail);
  }

  static notFound(reference: string, description = 'Payout record not found', detail?: string): PayoutError {
    return new PayoutError(PAYOUT_CODES.NOT_FOUND, 'RESOURCE_NOT_FOUND', description, reference, detail);
  }
}
