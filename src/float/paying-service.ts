import { EntityManager } from 'typeorm';
import { ClientServicesService, ServiceTerms } from '../client-services/client-services.service';
import { WalletStatus } from '../wallets/wallet.entity';
import { moneyRefusal } from '../wallets/wallet-state-machine';

/** A client service that may pay a disbursement: its float is its settlement wallet. */
export type PayingService = ServiceTerms & { settlementAccountId: string; settlementCurrency: string };

/** Why a service may not pay, in the payout family's error codes; each interface words its own answer. */
export interface PayingServiceRefusal {
  refusal: 'SERVICE_NOT_ALLOWED' | 'INVALID_WALLET';
  detail: string;
}

/**
 * The service a payout, IMT, B2B or airtime request is paid from: one of the caller's, active, with a float whose
 * wallet and profile may pay (provider contract §4 and §5). Amount bounds and currency are the caller's rules.
 */
export async function payingService(
  services: ClientServicesService,
  manager: EntityManager,
  clientId: string,
  serviceCode: string,
): Promise<PayingService | PayingServiceRefusal> {
  const terms = await services.findTerms(manager, clientId, serviceCode);
  if (!terms || !terms.isActive) return { refusal: 'SERVICE_NOT_ALLOWED', detail: `Invalid service code ${serviceCode}` };
  if (!terms.settlementAccountId || !terms.settlementCurrency) {
    return { refusal: 'INVALID_WALLET', detail: `Service ${serviceCode} has no float (settlement wallet) configured` };
  }
  const [float]: Array<{ status: WalletStatus; profileActive: boolean }> = await manager.query(
    `SELECT w.status, (p.is_active = 1) AS "profileActive" FROM wallets w JOIN profiles p ON p.id = w.profile_id WHERE w.id = $1`,
    [terms.settlementAccountId],
  );
  if (!float || moneyRefusal(float, 'PAY') !== null) {
    return { refusal: 'INVALID_WALLET', detail: `The float of service ${serviceCode} is not active` };
  }
  return terms as PayingService;
}

export function isRefusal(service: PayingService | PayingServiceRefusal): service is PayingServiceRefusal {
  return 'refusal' in service;
}
