/** The gateway requests the benches send, as bodies for autocannon or the open loop. */
import type { GatewayBench } from './gateway-bench';

/** A number the sandbox rails succeed for, as payer and as recipient (provider contract §7). */
export const SANDBOX_PAYER = '254712345678';

/** POST /v1/mobile-money/charge: 100 KES from SANDBOX_PAYER (settled successfully), called back to the receiver. */
export function chargeBody(bench: GatewayBench, reference: string): string {
  const m = bench.merchant;
  return JSON.stringify({
    external_reference: reference,
    client_code: m.clientCode,
    origin_channel_code: 'API',
    originator_msisdn: SANDBOX_PAYER,
    payer_msisdn: SANDBOX_PAYER,
    payer_name: 'Bench Payer',
    payer_email: 'payer@example.com',
    service_code: m.serviceCode,
    account_number: 'INV-BENCH',
    invoice_number: '',
    currency_code: 'KES',
    country_code: 'KEN',
    amount: '100',
    add_transaction_charge: false,
    transaction_charge: '0',
    payment_method_code: 'MMONEY_KEN',
    extra_data: { bench: true },
    description: 'Bench charge',
    notify_client: false,
    notify_originator: false,
    callback_url: `${bench.receiver.base}/cb`,
  });
}

/** POST /v1/payouts/initiate: MOBILE via MMONEY_KEN to SANDBOX_PAYER (paid), 100 KES, called back to the receiver. */
export function payoutBody(bench: GatewayBench, reference: string): string {
  return JSON.stringify({
    payout_reference: reference,
    service_code: bench.merchant.serviceCode,
    recipient_first_name: 'Bench',
    recipient_last_name: 'Recipient',
    destination_type: 'MOBILE',
    destination_name: 'MMONEY_KEN',
    recipient_phone_number: SANDBOX_PAYER,
    recipient_account_number: SANDBOX_PAYER,
    recipient_bank_code: '',
    recipient_account_name: 'Bench Recipient',
    source_currency: 'KES',
    destination_currency: 'KES',
    exchange_rate: '1',
    sender_amount: '100',
    sender_country_code: 'KEN',
    recipient_amount: '100',
    payment_description: 'Bench payout',
    callback_url: `${bench.receiver.base}/payout`,
  });
}
