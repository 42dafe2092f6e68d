import { EntityManager } from 'typeorm';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import type { CollectionRefusal } from './collecting-service';

/** What collection_merchant_fee answers: the fee, and the refusal when it is not below the amount. */
export interface MerchantFee {
  fee: string;
  refusal: Extract<CollectionRefusal, { problem: 'FEE' }> | null;
}

const MERCHANT_FEE: PreparedStatement = {
  name: 'collection_merchant_fee',
  text: 'SELECT * FROM collection_merchant_fee(p_client_id => $1, p_service_id => $2, p_amount => $3, p_payer_pays_charge => $4)',
};

/**
 * collection_merchant_fee (src/collections/sql/collection_merchant_fee.sql): the merchant's fee on a collection and the
 * rule that it be below the amount, as charge acceptance applies them in SQL.
 */
export async function merchantFee(
  manager: EntityManager,
  input: { clientId: string; serviceId: string; amount: string; payerPaysCharge: boolean },
): Promise<MerchantFee> {
  const [row] = await runPrepared<MerchantFee>(manager, MERCHANT_FEE, [
    input.clientId,
    input.serviceId,
    input.amount,
    input.payerPaysCharge,
  ]);
  return row;
}
