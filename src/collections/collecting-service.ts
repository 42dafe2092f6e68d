import { GATEWAY_CODES, GatewayError } from '../common/errors/gateway-error';
import { formatAmount } from '../common/money';

/**
 * Why the database refused a collection (charge or checkout), as the acceptance SQL answers it: a jsonb object naming
 * the rule (`problem`) and its values. REQUEST is the caller's own check (a callback URL, the split settlements'
 * shape), answered at its place in the order; the service rules come from collecting_service and the fee's from
 * collection_merchant_fee (src/collections/sql/). Split partners' refusals are settlements' (SplitRefusal).
 */
export type CollectionRefusal =
  | { problem: 'REQUEST' }
  | { problem: 'SERVICE_UNKNOWN' }
  | { problem: 'SERVICE_NO_WALLET' }
  | { problem: 'AMOUNT_BOUNDS'; minimum: string; maximum: string }
  | { problem: 'CURRENCY'; currency: string }
  | { problem: 'FEE'; fee: string };

/**
 * What a collection's acceptance answers (collection_accept_charge, collection_initiate_checkout): the record it
 * created, replayed or is a 409 about, as the response shows it, or the refusal (`S`: the split partners' refusals).
 */
export type CollectionAnswer<T, S> =
  ({ outcome: 'CREATED' | 'REPLAY' | 'CONFLICT'; refusal: null } & T) | { outcome: 'REFUSED'; refusal: CollectionRefusal | S };

const COLLECTION_PROBLEMS: ReadonlySet<string> = new Set<CollectionRefusal['problem']>([
  'REQUEST',
  'SERVICE_UNKNOWN',
  'SERVICE_NO_WALLET',
  'AMOUNT_BOUNDS',
  'CURRENCY',
  'FEE',
]);

/**
 * The documented error for a refused collection. The rule shared by charges and checkout for the client service a
 * collection is made on (collecting_service): one of the caller's, active, with a settlement wallet, the amount within
 * its bounds; a charge also in the service's currency and above the merchant's fee. Any other refusal is a split
 * settlement's, worded by `splitError`.
 */
export function collectionRefusalError<S extends { problem: string }>(
  refusal: CollectionRefusal | S,
  serviceCode: string,
  requestError: GatewayError | null,
  splitError: (refusal: S) => GatewayError,
): GatewayError {
  if (!COLLECTION_PROBLEMS.has(refusal.problem)) return splitError(refusal as S);
  const known = refusal as CollectionRefusal;
  switch (known.problem) {
    case 'REQUEST':
      return requestError!;
    case 'SERVICE_UNKNOWN':
      return GatewayError.validation(`Invalid service code ${serviceCode}`);
    case 'SERVICE_NO_WALLET':
      return GatewayError.validation(`Service ${serviceCode} has no settlement wallet configured`);
    case 'AMOUNT_BOUNDS':
      return GatewayError.validation(`amount must be between ${formatAmount(known.minimum)} and ${formatAmount(known.maximum)}`);
    case 'CURRENCY':
      return new GatewayError(
        400,
        GATEWAY_CODES.INVALID_CURRENCY,
        'Invalid currency code',
        `Service ${serviceCode} collects in ${known.currency}`,
      );
    case 'FEE':
      return GatewayError.validation(`amount must be greater than the service fee of ${formatAmount(known.fee)}`);
  }
}
