import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { dataSource } from './test-app';
import { gateway, GatewayMerchant, MerchantReceiver, waitFor } from './gateway-fixtures';

/**
 * Helpers for the hosted-checkout, split-settlement, collection-reversal and payment-statement tests: a valid
 * checkout initiation body, polling a checkout's status, and exact decimal arithmetic on balances.
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
