import { GATEWAY_CODES, GatewayError } from '../common/errors/gateway-error';
import { formatAmount } from '../common/money';

/**
 * Why the database refused a collection (charge or checkout): `problem` names the rule, `details` its values.
 * REQUEST is the caller's own check (a callback URL, the split settlements' shape), answered at its place in the order.
 */
export interface CollectionRefusal {
  problem: string;
  details: string[] | null;
}

/**
 * The documented error for a refused collection. The rule shared by charges and checkout for the client service a
 * collection is made on (SQL function collecting_service): one of the caller's, active, with a settlement wallet,
 * the amount within its bounds; a charge also in the service's currency and above the merchant's fee. Split
 * settlement problems are worded by `splitError`; anything else is the documented 172 validation failure.
 */
export function collectionRefusalError(
  refusal: CollectionRefusal,
  serviceCode: string,
  requestError: GatewayError | null,
  splitError: (refusal: CollectionRefusal) => GatewayError | null,
): GatewayError {
  const [first, second] = refusal.details ?? [];
  switch (refusal.problem) {
    case 'REQUEST':
      return requestError!;
    case 'SERVICE_UNKNOWN':
      return GatewayError.validation(`Invalid service code ${serviceCode}`);
    case 'SERVICE_NO_WALLET':
      return GatewayError.validation(`Service ${serviceCode} has no settlement wallet configured`);
    case 'AMOUNT_BOUNDS':
      return GatewayError.validation(`amount must be between ${formatAmount(first)} and ${formatAmount(second)}`);
    case 'CURRENCY':
      return new GatewayError(400, GATEWAY_CODES.INVALID_CURRENCY, 'Invalid currency code', `Service ${serviceCode} collects in ${first}`);
    case 'FEE':
      return GatewayError.validation(`amount must be greater than the service fee of ${formatAmount(first)}`);
  }
  const split = splitError(refusal);
  if (!split) throw new Error(`unknown collection refusal ${refusal.problem}`);
  return split;
}
