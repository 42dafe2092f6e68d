import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { EntityManager } from 'typeorm';
import { SplitShare } from '../settlements/split-settlements.service';

/** A payment about to be recorded: a direct charge, or a payment of a hosted-checkout session. */
export interface NewPayment {
  clientId: string;
  clientServiceId: string;
  checkoutSessionId: string | null;
  externalReference: string;
  requestFingerprint: string;
  originChannelCode: string;
  originatorMsisdn: string;
  payerMsisdn: string;
  payerName: string | null;
  payerEmail: string;
  accountNumber: string;
  invoiceNumber: string;
  currency: string;
  countryCode: string;
  serviceAmount: Decimal;
  transactionCharge: Decimal;
  merchantFee: Decimal;
  addTransactionCharge: boolean;
  paymentMethodCode: string;
  extraData: Record<string, unknown>;
  description: string;
  notifyClient: boolean;
  notifyOriginator: boolean;
  callbackUrl: string;
  nextStep: 'VERIFY_OTP' | 'AUTHORIZE_TRANSACTION' | null;
  splitSettlements: SplitShare[] | null;
}

@Injectable()
export class PaymentsRepository {
  /**
   * Records a payment. Returns null when a direct charge with the same external_reference committed first (the
   * partial unique index makes a concurrent duplicate wait, then insert nothing).
   */
  async insert(manager: EntityManager, p: NewPayment): Promise<string | null> {
    const [row] = await manager.query(
      `INSERT INTO payments (client_id, client_service_id, checkout_session_id, external_reference, request_fingerprint,
         origin_channel_code, originator_msisdn, payer_msisdn, payer_name, payer_email, account_number, invoice_number,
         currency, country_code, service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge,
         payment_method_code, extra_data, description, notify_client, notify_originator, callback_url, next_step, split_settlements)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
         $25, $26, $27)
       ON CONFLICT (client_id, external_reference) WHERE checkout_session_id IS NULL DO NOTHING
       RETURNING id`,
      [
        p.clientId, p.clientServiceId, p.checkoutSessionId, p.externalReference, p.requestFingerprint, p.originChannelCode,
        p.originatorMsisdn, p.payerMsisdn, p.payerName, p.payerEmail, p.accountNumber, p.invoiceNumber, p.currency,
        p.countryCode, p.serviceAmount.toFixed(), p.transactionCharge.toFixed(), p.serviceAmount.plus(p.transactionCharge).toFixed(),
        p.merchantFee.toFixed(), p.addTransactionCharge, p.paymentMethodCode, p.extraData, p.description, p.notifyClient,
        p.notifyOriginator, p.callbackUrl, p.nextStep, p.splitSettlements === null ? null : JSON.stringify(p.splitSettlements),
      ],
    );
    return row?.id ?? null;
  }
}
