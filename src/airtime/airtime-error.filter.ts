import { Catch } from '@nestjs/common';
import { ValidationProblem } from '../common/errors/request-validation.error';
import { EarlyRefusalBody } from '../common/errors/http-error.filter';
import { errorCodeOf, PayoutErrorFilter } from '../payout-requests/payout-error.filter';
import { PayoutError } from '../payout-requests/payout-error';
import { airtimeRejection } from './airtime';

const MAX_LISTED_PROBLEMS = 10;

/** An airtime request refused before its route ran (not JSON, too large): 721 Validation Failed, reference null. */
export const AIRTIME_EARLY_REFUSAL: EarlyRefusalBody = {
  prefix: '/v1/gw/airtime/',
  body: (message) => airtimeRejection(undefined, 'VALIDATION_FAILED', message).body('reference', null),
};

/**
 * Airtime answers in the payout-family body keyed by `reference`; a malformed request is 721 "Validation Failed"
 * (document §7) listing what is wrong (up to ten rules), with the error_code of the first broken rule.
 */
@Catch()
export class AirtimeErrorFilter extends PayoutErrorFilter {
  protected readonly referenceField = 'reference' as const;
  /** Airtime bodies always carry `reference`, null when the request had no usable one. */
  protected readonly unknownReference = null;

  protected invalidBody(problems: ValidationProblem[]): PayoutError {
    const messages = problems.map((p) => p.message);
    const listed = messages.slice(0, MAX_LISTED_PROBLEMS).join('; ');
    const more = messages.length > MAX_LISTED_PROBLEMS ? `; and ${messages.length - MAX_LISTED_PROBLEMS} more` : '';
    const code = errorCodeOf(problems[0]);
    return airtimeRejection(undefined, code === 'INVALID_PHONE_NUMBER' ? code : 'VALIDATION_FAILED', listed + more);
  }
}
