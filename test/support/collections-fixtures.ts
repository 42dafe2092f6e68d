import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { dataSource } from './test-app';
import {
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  startIsolatedSandbox,
  waitFor,
} from './gateway-fixtures';

/**
 * Helpers for the hosted-checkout, split-settlement, collection-reversal and payment-statement tests: a valid
 * checkout initiation body, polling a checkout's status, a session with payments in any status, and exact decimal
 * arithmetic on balances.
 */

/** ISO 8601 in UTC, as the documents show it. */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A complete, valid checkout initiation of the merchant, with callback and redirect on the local receiver. */
export function checkoutBody(merchant: GatewayMerchant, receiver: Pick<MerchantReceiver, 'url'>, overrides: Record<string, unknown> = {}) {
  return {
    merchant_transaction_id: `mtx-${randomUUID()}`,
    amount: 1500,
    payer_name: 'Jane Payer',
    payer_email: 'jane.payer@example.com',
    payer_msisdn: '254712345678',
    service_code: merchant.serviceCode,
    account_number: 'ACC-2024-0001',
    expires_in: 60,
    narration: 'Order #42: two concert tickets',
    callback_url: receiver.url(`/checkout-callback/${randomUUID()}`),
    redirect_url: receiver.url(`/thank-you/${randomUUID()}`),
    ...overrides,
  } as Record<string, any>;
}

export async function initiateCheckout(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  receiver: MerchantReceiver,
  overrides: Record<string, unknown> = {},
) {
  const body = checkoutBody(merchant, receiver, overrides);
  const res = await gateway(app, merchant.token).post('/v2/checkout/initiate').send(body);
  if (res.status !== 200) throw new Error(`checkout initiate failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { body, res, reference: res.body.checkout_reference as string, mtid: body.merchant_transaction_id as string };
}

export async function checkoutStatus(app: NestFastifyApplication, merchant: GatewayMerchant, mtid: string) {
  return gateway(app, merchant.token).get(`/v2/checkout/status/${encodeURIComponent(mtid)}`);
}

/** Polls GET /v2/checkout/status until the session has the given status. */
export async function waitForCheckout(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  mtid: string,
  status: number,
  timeoutMs = 15_000,
): Promise<Record<string, any>> {
  return waitFor(
    `checkout ${mtid} to reach ${status}`,
    async () => {
      const res = await checkoutStatus(app, merchant, mtid);
      return res.status === 200 && res.body.status === status ? (res.body as Record<string, any>) : undefined;
    },
    timeoutMs,
  );
}

/** An isolated sandbox and a merchant of it. */
export interface CollectionsBed {
  sandbox: IsolatedSandbox;
  app: NestFastifyApplication;
  merchant: GatewayMerchant;
}

/** A sandbox whose settlement jobs are due in an hour (only what a test starts runs), with one gateway merchant. */
export async function collectionsBed(): Promise<CollectionsBed> {
  const sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: String(3_600_000) });
  return { sandbox, app: sandbox.app, merchant: await createGatewayMerchant(sandbox.app) };
}

/** A payment of a session, written as the settlement would leave it. */
export interface SessionPaymentSpec {
  status: number;
  amount: string;
  msisdn?: string;
  settledAt?: string | null;
  payerTransactionId?: string | null;
  extraData?: unknown;
  description?: string;
}

/** A checkout of the merchant in `status` with the given payments (initiated, then written directly); its id and mtid. */
export async function sessionWithPayments(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  receiver: MerchantReceiver,
  status: number,
  payments: SessionPaymentSpec[],
  overrides: Record<string, unknown> = {},
): Promise<{ sessionId: string; mtid: string }> {
  const db = dataSource(app);
  const { reference, mtid } = await initiateCheckout(app, merchant, receiver, { amount: 2750, ...overrides });
  const [[session]] = await db.query(`UPDATE checkout_sessions SET status = $2 WHERE checkout_reference = $1 RETURNING id`, [
    reference,
    status,
  ]);
  for (const p of payments) {
    await db.query(
      `INSERT INTO payments (client_id, client_service_id, checkout_session_id, external_reference, request_fingerprint,
         origin_channel_code, originator_msisdn, payer_msisdn, payer_name, payer_email, account_number, invoice_number, currency,
         country_code, service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge, payment_method_code,
         extra_data, description, notify_client, notify_originator, callback_url, payment_status, settled_at, payer_transaction_id)
       SELECT cs.client_id, cs.client_service_id, cs.id, cs.merchant_transaction_id, 'checkout:' || gen_random_uuid(),
         'WEB', $2, $2, cs.payer_name, cs.payer_email, cs.account_number, '', cs.currency,
         'KEN', $3::numeric, 0, $3::numeric, 10, false, 'MMONEY',
         $4::jsonb, coalesce($5, cs.narration), false, false, cs.callback_url, $6, $7::timestamptz, $8
       FROM checkout_sessions cs WHERE cs.id = $1`,
      [
        session.id,
        p.msisdn ?? '254712345678',
        p.amount,
        JSON.stringify(p.extraData ?? { order: 42 }),
        p.description ?? null,
        p.status,
        p.settledAt === undefined ? '2025-03-04 05:06:07.123456+00' : p.settledAt,
        p.payerTransactionId === undefined ? 'SBX0123ABCD' : p.payerTransactionId,
      ],
    );
  }
  return { sessionId: String(session.id), mtid };
}

/** a + b + … with decimal.js, 4 decimals. */
export function plus(a: Decimal.Value, ...rest: Decimal.Value[]): string {
  return rest.reduce<Decimal>((sum, v) => sum.plus(v), new Decimal(a)).toFixed(4);
}

export function minus(a: Decimal.Value, ...rest: Decimal.Value[]): string {
  return rest.reduce<Decimal>((sum, v) => sum.minus(v), new Decimal(a)).toFixed(4);
}

/** Journal entries of the client, optionally of one kind. */
export async function entryCount(app: NestFastifyApplication, clientId: string, kind?: string): Promise<number> {
  const [row] = await dataSource(app).query(
    `SELECT count(*)::int AS n FROM journal_entries WHERE client_id = $1 AND ($2::text IS NULL OR kind = $2)`,
    [clientId, kind ?? null],
  );
  return row.n;
}
