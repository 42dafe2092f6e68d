import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { verifySignature } from './callback-signature';
import { createPayoutMerchant } from './disbursement-fixtures';
import { gateway, GatewayMerchant, ledgerBalance, MerchantReceiver, ReceivedCallback, systemBalance, waitFor } from './gateway-fixtures';
import { countsOf, dataSource } from './test-app';

/**
 * Helpers for the bulk airtime tests (disbursement document "Airtime"; provider contract §5, §7 airtime column,
 * §10 "Airtime"): a merchant with a funded float and an airtime callback endpoint, request bodies, the status
 * query, and the money a request moved.
 */

/** Recipient numbers of the sandbox table (provider contract §7) and the service_status each one ends in. */
export const AIRTIME_SANDBOX = [
  { row: 'failed', number: '254700000001', status: 603 },
  { row: 'stays processing', number: '254700000002', status: 601 },
  { row: 'jammed', number: '254700000003', status: 604 },
  { row: 'OTP test number', number: '254700000004', status: 602 },
  { row: 'authorise test number', number: '254700000005', status: 602 },
  { row: 'anything else', number: '254712345678', status: 602 },
] as const;

/** 602 and 603 are final: the hold has its outcome and the merchant gets a callback. */
export const FINAL = [602, 603];

export interface AirtimeMerchant extends GatewayMerchant {
  /** The airtime callback endpoint (callback settings of kind airtime), or null when none was set. */
  airtimeUrl: string | null;
  airtimeUsername: string;
  airtimePassword: string;
}

/**
 * A payout merchant (createPayoutMerchant: KES service, FIXED fee 10 unless overridden, float 1,000,000) whose
 * airtime callbacks go to `receiver` with credentials of their own (so a test sees the airtime kind's are used).
 */
export async function createAirtimeMerchant(
  app: NestFastifyApplication,
  receiver: MerchantReceiver | null,
  options: { float?: Decimal.Value; serviceOverrides?: Record<string, unknown> } = {},
): Promise<AirtimeMerchant> {
  const merchant = await createPayoutMerchant(app, options);
  const airtimeUsername = `air-${merchant.clientCode.toLowerCase()}`;
  const airtimePassword = `pw-${randomUUID()}`;
  const airtimeUrl = receiver ? receiver.url(`/airtime/${randomUUID()}`) : null;
  if (airtimeUrl) {
    await app
      .get(CallbackSettingsService)
      .setEndpoint(merchant.clientId, 'airtime', { url: airtimeUrl, username: airtimeUsername, password: airtimePassword });
  }
  return { ...merchant, airtimeUrl, airtimeUsername, airtimePassword };
}

export function airtimeBody(recipients: Array<{ phone_number: unknown; amount: unknown }>, overrides: Record<string, unknown> = {}) {
  return { reference: `air-${randomUUID()}`, recipients, ...overrides };
}

export function sendAirtime(app: NestFastifyApplication, merchant: GatewayMerchant, body: unknown) {
  return gateway(app, merchant.token)
    .post('/v1/gw/airtime/send')
    .send(body as object);
}

export function airtimeStatus(app: NestFastifyApplication, merchant: GatewayMerchant, reference: string) {
  return gateway(app, merchant.token).get(`/v1/gw/airtime/${encodeURIComponent(reference)}/status`);
}

/** Polls the status query until every recipient has left 600 (the provider was asked about each one). */
export async function waitForProcessed(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  reference: string,
  timeoutMs = 30_000,
): Promise<Array<Record<string, any>>> {
  return waitFor(
    `airtime ${reference} to be processed`,
    async () => {
      const res = await airtimeStatus(app, merchant, reference);
      return res.status === 200 && res.body.every((r: { service_status: number }) => r.service_status !== 600) ? res.body : undefined;
    },
    timeoutMs,
    100,
  );
}

/** The float, the airtime in-flight account and fee income of the merchant, as stored. */
export async function airtimeMoney(app: NestFastifyApplication, merchant: GatewayMerchant) {
  return {
    float: await ledgerBalance(app, merchant.settlementAccountNumber),
    inFlight: await systemBalance(app, merchant.clientId, 'IN_FLIGHT_AIRTIME'),
    feeIncome: await systemBalance(app, merchant.clientId, 'FEE_INCOME'),
  };
}

/** Everything an airtime request could have written for a client. A rejection changes none of it. */
export async function airtimeStored(app: NestFastifyApplication, clientId: string) {
  const [entries, holds, requests, recipients] = await countsOf(app, clientId, [
    'journal_entries',
    'float_holds',
    'airtime_requests',
    'airtime_recipients',
  ]);
  return { entries, holds, requests, recipients };
}

/** A callback as the merchant must check it: POST JSON, the airtime endpoint's Basic auth, a valid signature. */
export function expectAuthenticAirtimeCallback(callback: ReceivedCallback, merchant: AirtimeMerchant): void {
  expect(callback.method).toBe('POST');
  expect(callback.headers['content-type']).toMatch(/^application\/json/);
  const basic = Buffer.from(`${merchant.airtimeUsername}:${merchant.airtimePassword}`).toString('base64');
  expect(callback.headers.authorization).toBe(`Basic ${basic}`);
  const signature = callback.headers['x-signature'] as string;
  expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  expect(verifySignature(merchant.signingSecret, callback.rawBody, signature)).toBe(true);
  expect(verifySignature(merchant.signingSecret, callback.rawBody.replace('"service_status"', '"service_statuS"'), signature)).toBe(false);
  expect(verifySignature('whsec_not-the-secret', callback.rawBody, signature)).toBe(false);
  expect(callback.headers['x-event-id']).toMatch(/^[0-9a-f-]{36}$/);
}

/**
 * The merchant callbacks scheduled for a client's airtime recipients: one per recipient that reached a final
 * status, written with its booking, so the count is settled as soon as the statuses are.
 */
export async function airtimeCallbacksScheduled(app: NestFastifyApplication, clientId: string): Promise<number> {
  const [row] = await dataSource(app).query(
    `SELECT count(*)::int AS n FROM callback_deliveries WHERE client_id = $1 AND kind = 'airtime'`,
    [clientId],
  );
  return row.n;
}

export function sum(values: Decimal.Value[]): Decimal {
  return values.reduce<Decimal>((total, v) => total.plus(v), new Decimal(0));
}
