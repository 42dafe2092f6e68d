import Decimal from 'decimal.js';
import { EntityManager } from 'typeorm';
import { ClientServicesService, ServiceTerms } from '../client-services/client-services.service';
import { GatewayError } from '../common/errors/gateway-error';
import { formatAmount } from '../common/money';

/**
 * The client service a collection (charge or checkout) is made on: one of the caller's, active, with a settlement
 * wallet, and the amount within its bounds. Anything else is the documented 172 validation failure.
 */
export async function collectingService(
  services: ClientServicesService,
  manager: EntityManager,
  request: { clientId: string; serviceCode: string; amount: Decimal },
): Promise<ServiceTerms & { settlementAccountId: string; settlementCurrency: string }> {
  const terms = await services.findTerms(manager, request.clientId, request.serviceCode);
  if (!terms || !terms.isActive) throw GatewayError.validation(`Invalid service code ${request.serviceCode}`);
  if (!terms.settlementAccountId || !terms.settlementCurrency) {
    throw GatewayError.validation(`Service ${request.serviceCode} has no settlement wallet configured`);
  }
  if (request.amount.lt(terms.minimumAmount) || request.amount.gt(terms.maximumAmount)) {
    throw GatewayError.validation(`amount must be between ${formatAmount(terms.minimumAmount)} and ${formatAmount(terms.maximumAmount)}`);
  }
  return terms as ServiceTerms & { settlementAccountId: string; settlementCurrency: string };
}
