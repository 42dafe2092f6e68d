import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { verifySignature } from './callback-signature';
import type { PayoutToAccept } from '../../src/payouts/payouts.repository';
import { MoneyMovementsService } from '../../src/transactions/money-movements.service';
import { addPayingService, CLI_JS, createGatewayMerchant, gateway, GatewayMerchant, ReceivedCallback, waitFor } from './gateway-fixtures';
import { countsOf, dataSource } from './test-app';

/**
 * Helpers for the disbursement tests (disbursement document; provider contract §5–§7, §10 "Payouts"): a merchant
 * whose client service pays out of a funded float (its settlement wallet), request bodies for local payouts, IMT and
 * B2B, the float balance as the merchant reads it, and the operator CLI.
 */

/** The FIXED fee of the client service createGatewayMerchant makes (as the seed's): the payout's transaction_cost. */
export const PAYOUT_FEE = '10.0000';

/** Recipient numbers of the sandbox rails table (provider contract §7) and the payout status each one gives. */
export const SANDBOX = {
  mobile: {
    failed: '254700000001',
    pending: '254700000002',
    jammed: '254700000003',
    otp: '254700000004',
    authorize: '254700000005',
    ok: '254712345678',
  },
  account: {
    failed: '0000000001',
    pending: '0000000002',
    jammed: '0000000003',
    otp: '0000000004',
    authorize: '0000000005',
    ok: '1234567890',
  },
} as const;

export type SandboxRow = 'failed' | 'pending' | 'jammed' | 'otp' | 'authorize' | 'ok';

/** The payout payment_status each sandbox row ends in (final or, for 703/704, where it stays). */
export const SANDBOX_STATUS: Record<SandboxRow, number> = { failed: 701, pending: 703, jammed: 704, otp: 700, authorize: 700, ok: 700 };

/** Amount strings as the service prints them: 4 decimals. */
export function dec(value: Decimal.Value): string {
  return new Decimal(value).toFixed(4);
}

export function plus(...values: Decimal.Value[]): string {
  return dec(values.reduce<Decimal>((sum, v) => sum.plus(v), new Decimal(0)));
}

export function minus(a: Decimal.Value, ...b: Decimal.Value[]): string {
  return dec(b.reduce<Decimal>((rest, v) => rest.minus(v), new Decimal(a)));
}

export function payoutReference(prefix = 'po'): string {
  return `${prefix}-${randomUUID()}`;
}

/**
 * A merchant ready to pay out: createGatewayMerchant (FIXED fee 10, bounds 1..1,000,000, settling into a fresh
 * wallet in `currency`, KES unless told otherwise), with the float (the settlement wallet) funded with `float`
 * (default 1,000,000.0000). `float: '0'` leaves it empty.
 */
export async function createPayoutMerchant(
  app: NestFastifyApplication,
  options: { float?: Decimal.Value; serviceOverrides?: Record<string, unknown>; clientCallbackUrl?: string; currency?: string } = {},
): Promise<GatewayMerchant> {
  const merchant = await createGatewayMerchant(app, {
    serviceOverrides: options.serviceOverrides,
    clientCallbackUrl: options.clientCallbackUrl,
    currency: options.currency,
  });
  const float = new Decimal(options.float ?? '1000000');
  if (float.gt(0)) await fundFloat(app, merchant, float);
  return merchant;
}

/** Another paying service of the merchant's client, with a float of its own funded with `float`. */
export async function addFloat(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  float: Decimal.Value,
): Promise<{ serviceCode: string; accountId: string }> {
  const { serviceCode, wallet } = await addPayingService(app, merchant.tenant, {
    name: 'Second float',
    walletName: 'Second float',
    currency: 'KES',
  });
  await app.get(MoneyMovementsService).fund(merchant.clientId, wallet.account_number, new Decimal(float));
  return { serviceCode, accountId: wallet.account_id };
}

/** Credits the merchant's float from its settlement system account (what `admin wallet:fund` does). */
export async function fundFloat(app: NestFastifyApplication, merchant: GatewayMerchant, amount: Decimal.Value): Promise<void> {
  await app.get(MoneyMovementsService).fund(merchant.clientId, merchant.settlementAccountNumber, new Decimal(amount));
}

/** A complete, valid local payout request (MOBILE unless overridden) paid from the merchant's float. */
export function localPayoutBody(merchant: GatewayMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const amount = String(overrides.sender_amount ?? '100.00');
  return {
    payout_reference: payoutReference('po'),
    service_code: merchant.serviceCode,
    recipient_first_name: 'Wanjiku',
    recipient_last_name: 'Kamau',
    destination_type: 'MOBILE',
    destination_name: 'MMONEY_KEN',
    recipient_phone_number: SANDBOX.mobile.ok,
    recipient_account_number: SANDBOX.mobile.ok,
    recipient_bank_code: '',
    recipient_account_name: 'Wanjiku Kamau',
    source_currency: 'KES',
    destination_currency: 'KES',
    exchange_rate: '1',
    sender_amount: amount,
    sender_country_code: 'KEN',
    recipient_amount: amount,
    payment_description: 'Salary November',
    callback_url: 'https://merchant.invalid/payouts',
    ...overrides,
  };
}

/** A local MOBILE payout to a sandbox row's number (phone and wallet account number both that number). */
export function mobilePayoutBody(merchant: GatewayMerchant, row: SandboxRow, overrides: Record<string, unknown> = {}) {
  return localPayoutBody(merchant, {
    recipient_phone_number: SANDBOX.mobile[row],
    recipient_account_number: SANDBOX.mobile[row],
    ...overrides,
  });
}

/** A local BANK payout to a sandbox row's account number; the phone is an ordinary number, so only the account decides. */
export function bankPayoutBody(merchant: GatewayMerchant, row: SandboxRow, overrides: Record<string, unknown> = {}) {
  return localPayoutBody(merchant, {
    destination_type: 'BANK',
    destination_name: 'BANK_KEN',
    recipient_bank_code: '01',
    recipient_account_number: SANDBOX.account[row],
    recipient_phone_number: SANDBOX.mobile.ok,
    ...overrides,
  });
}

/**
 * A complete, valid international transfer: KES from the float to USD at 0.0077 (1,000 KES → 7.70 USD). Only the
 * required fields unless overridden.
 */
export function imtBody(merchant: GatewayMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    payout_reference: payoutReference('imt'),
    service_code: merchant.serviceCode,
    sender_first_name: 'Akinyi',
    sender_last_name: 'Odhiambo',
    sender_type: 'INDIVIDUAL',
    sender_country_code: 'KEN',
    recipient_type: 'INDIVIDUAL',
    recipient_first_name: 'John',
    recipient_last_name: 'Smith',
    recipient_phone_number: SANDBOX.mobile.ok,
    recipient_account_number: SANDBOX.mobile.ok,
    recipient_account_name: 'John Smith',
    recipient_occupation: 'Engineer',
    destination_type: 'MOBILE',
    destination_name: 'MMONEY_KEN',
    source_currency: 'KES',
    destination_currency: 'USD',
    income_source: 'SALARY',
    fund_purpose: 'FAMILY_SUPPORT',
    exchange_rate: '0.0077',
    sender_amount: '1000.00',
    recipient_amount: '7.70',
    payment_description: 'Family support',
    callback_url: 'https://merchant.invalid/imt',
    ...overrides,
  };
}

/** A complete, valid B2B payout to a PAYBILL (recipient_type/payment_method changed together by the caller). */
export function b2bBody(merchant: GatewayMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    payout_reference: payoutReference('b2b'),
    service_code: merchant.serviceCode,
    payment_account_reference: 'INV-2026-11',
    recipient_name: 'Acme Supplies Ltd',
    recipient_type: 'PAYBILL',
    recipient_account_number: '888880',
    amount: '250.00',
    payment_description: 'Supplier invoice INV-2026-11',
    payment_method: 'MMONEY_B2B',
    currency_code: 'KES',
    country_code: 'KEN',
    callback_url: 'https://merchant.invalid/b2b',
    ...overrides,
  };
}

/**
 * A payout as PayoutsRepository.accept takes it: a local MOBILE payout of `amount` from the merchant's service, its
 * processing job an hour away, unless overridden.
 */
export function payoutToAccept(
  merchant: GatewayMerchant,
  reference: string,
  amount: string,
  overrides: Partial<PayoutToAccept> = {},
): PayoutToAccept {
  return {
    clientId: merchant.clientId,
    serviceCode: merchant.serviceCode,
    kind: 'LOCAL',
    payoutReference: reference,
    amount: new Decimal(amount),
    currency: 'KES',
    recipientMoney: null,
    destinationType: 'MOBILE',
    destinationName: 'MMONEY_KEN',
    recipientAccountNumber: '254712345678',
    recipientPhoneNumber: '254712345678',
    recipientBankCode: null,
    request: { payout_reference: reference },
    callbackUrl: 'https://merchant.invalid/payouts',
    rail: 'IN_FLIGHT_MOBILE_MONEY',
    processAt: new Date(Date.now() + 3_600_000),
    ...overrides,
  };
}

export const PAYOUT_PATHS = {
  local: '/v1/payouts/initiate',
  imt: '/v1/payouts/imt/initiate',
  b2b: '/v1/payouts/b2b/initiate',
} as const;

export const statusPath = (reference: string) => `/v1/payouts/${encodeURIComponent(reference)}/status`;
export const b2bStatusPath = (reference: string) => `/v1/payouts/b2b/${encodeURIComponent(reference)}/status`;

export interface FloatBalance {
  balance: string;
  currency: string;
  status: string;
  ledger_balance: string;
  reserved_balance: string;
}

/** GET /v1/accounts/{n}/balance of the merchant's float, as the merchant reads it (asserts 200). */
export async function floatBalance(app: NestFastifyApplication, merchant: GatewayMerchant): Promise<FloatBalance> {
  const res = await gateway(app, merchant.token).get(`/v1/accounts/${merchant.settlementAccountNumber}/balance`);
  if (res.status !== 200) throw new Error(`float balance: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as FloatBalance;
}

/** What the float should read: available (`balance`) and reserved; ledger_balance is their sum. */
export function expectedFloat(available: Decimal.Value, reserved: Decimal.Value = 0): FloatBalance {
  return {
    balance: dec(available),
    currency: 'KES',
    status: 'ACTIVE',
    ledger_balance: plus(available, reserved),
    reserved_balance: dec(reserved),
  };
}

/** The acknowledgement of the payout family (provider contract §5): 720 → 200, 721 → 400, 722 → 409, 723 → 404. */
export function expectPayoutAnswer(res: request.Response, code: 720 | 721 | 722 | 723, reference?: string, errorCode?: string): void {
  const http = { 720: 200, 721: 400, 722: 409, 723: 404 }[code];
  if (res.status !== http || res.body?.response_code !== code) {
    throw new Error(`expected HTTP ${http} with response_code ${code}, got HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  }
  expect(res.body.response_description).toEqual(expect.stringMatching(/\S/));
  if (reference !== undefined) expect(res.body.payout_reference).toBe(reference);
  if (code === 720) expect(res.body.error_code).toBeUndefined();
  else expect(res.body.error_code).toEqual(errorCode ?? expect.stringMatching(/^[A-Z_]+$/));
}

/** Polls a status route until payment_status (top level for B2B, data.payment_status otherwise) is `status`. */
export async function waitForPayoutStatus(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  reference: string,
  status: number,
  options: { b2b?: boolean; timeoutMs?: number } = {},
): Promise<Record<string, any>> {
  return waitFor(
    `payout ${reference} to reach ${status}`,
    async () => {
      const res = await gateway(app, merchant.token).get(options.b2b ? b2bStatusPath(reference) : statusPath(reference));
      if (res.status !== 200) return undefined;
      const current = options.b2b ? res.body.payment_status : res.body.data?.payment_status;
      return current === status ? (res.body as Record<string, any>) : undefined;
    },
    options.timeoutMs ?? 15_000,
  );
}

/** The payout row (D1's `payouts` table) of a reference, with its hold; undefined when nothing was stored. */
export async function payoutRow(
  app: NestFastifyApplication,
  clientId: string,
  reference: string,
): Promise<Record<string, any> | undefined> {
  const [row] = await dataSource(app).query(
    `SELECT p.*, h.status AS hold_status, h.outcome_entry_id FROM payouts p LEFT JOIN float_holds h ON h.client_id = p.client_id AND h.id = p.hold_id
     WHERE p.client_id = $1 AND p.payout_reference = $2`,
    [clientId, reference],
  );
  return row;
}

/**
 * Waits until the rail's first answer to the payout is applied (its checked_at is set with the status, the hold's
 * outcome and the callbacks, in one transaction), so what a test reads next is what that answer left.
 */
export async function waitForRailAnswer(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  reference: string,
): Promise<Record<string, any>> {
  return waitFor(`the rail's answer to payout ${reference}`, async () => {
    const row = await payoutRow(app, merchant.clientId, reference);
    return row?.checked_at ? row : undefined;
  });
}

/** Everything a request could have written for a client: journal entries, holds, payouts. A rejection changes none. */
export async function storedCounts(
  app: NestFastifyApplication,
  clientId: string,
): Promise<{ entries: number; holds: number; payouts: number }> {
  const [entries, holds, payouts] = await countsOf(app, clientId, ['journal_entries', 'float_holds', 'payouts']);
  return { entries, holds, payouts };
}

/** A request refused before acceptance (721 VALIDATION_FAILED), its description matching `message`, storing nothing. */
export async function expectValidationRefusal(
  app: NestFastifyApplication,
  merchant: GatewayMerchant,
  path: string,
  body: Record<string, unknown>,
  message: RegExp,
): Promise<void> {
  const before = await storedCounts(app, merchant.clientId);
  const res = await gateway(app, merchant.token).post(path).send(body);
  expectPayoutAnswer(res, 721, body.payout_reference as string, 'VALIDATION_FAILED');
  expect(res.body.response_description).toMatch(message);
  expect(await storedCounts(app, merchant.clientId)).toEqual(before);
}

export interface BasicCredentials {
  username: string;
  password: string;
}

/**
 * The checks every payout callback must pass (provider contract §6): POST JSON, a valid signature, an event id, and
 * Basic auth with the credentials of the client's `payouts` callback settings. Those credentials go only to the
 * origin of the registered URL (the engine's rule, so a per-request callback_url elsewhere never sees the
 * password): pass `null` for a callback that must carry none.
 */
export function expectSignedCallback(callback: ReceivedCallback, merchant: GatewayMerchant, basic: BasicCredentials | null): void {
  expect(callback.method).toBe('POST');
  expect(callback.headers['content-type']).toMatch(/^application\/json/);
  expect(callback.headers.authorization).toBe(
    basic ? `Basic ${Buffer.from(`${basic.username}:${basic.password}`).toString('base64')}` : undefined,
  );
  const signature = callback.headers['x-signature'] as string;
  expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  expect(verifySignature(merchant.signingSecret, callback.rawBody, signature)).toBe(true);
  // The signature covers the body and needs the client's secret.
  expect(verifySignature(merchant.signingSecret, callback.rawBody.replace('"payout_reference"', '"payout_referencE"'), signature)).toBe(
    false,
  );
  expect(verifySignature('whsec_not-the-secret', callback.rawBody, signature)).toBe(false);
  expect(callback.headers['x-event-id']).toEqual(expect.stringMatching(/\S{8,}/));
}

/** Registers the client's `payouts` callback URL with fresh Basic credentials (what `callback:set --kind payouts` does). */
export async function setPayoutsCallback(app: NestFastifyApplication, merchant: GatewayMerchant, url: string): Promise<BasicCredentials> {
  const basic = { username: `payouts-${randomUUID().slice(0, 8)}`, password: `pw-${randomUUID()}` };
  await app.get(CallbackSettingsService).setEndpoint(merchant.clientId, 'payouts', { url, ...basic });
  return basic;
}

/**
 * The client's journal entries, id → kind. On Citus ids are in no order of events (a worker's copy of the sequence
 * counts from its group << 48, the coordinator's from 1), so what a step added is told by id, not by position.
 */
export async function journalEntries(app: NestFastifyApplication, clientId: string): Promise<Map<string, string>> {
  const rows: Array<{ id: string; kind: string }> = await dataSource(app).query(
    `SELECT id, kind FROM journal_entries WHERE client_id = $1`,
    [clientId],
  );
  return new Map(rows.map((row) => [String(row.id), row.kind]));
}

/** The kinds of the client's entries made since `before` was read. */
export async function entriesSince(app: NestFastifyApplication, clientId: string, before: Map<string, string>): Promise<string[]> {
  return [...(await journalEntries(app, clientId))].filter(([id]) => !before.has(id)).map(([, kind]) => kind);
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled operator CLI (`npm run admin -- …`) against a database. */
export function runCli(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_JS, ...args],
      { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A successful `--json` run: exit 0, nothing on stderr, one JSON object on stdout. */
export function cliJson(result: CliResult): Record<string, unknown> {
  if (result.code !== 0 || result.stderr !== '') throw new Error(`CLI failed (${result.code}): ${result.stderr}${result.stdout}`);
  const lines = result.stdout.split('\n').filter((l) => l.length > 0);
  if (lines.length !== 1) throw new Error(`CLI printed ${lines.length} lines: ${result.stdout}`);
  return JSON.parse(lines[0]);
}
