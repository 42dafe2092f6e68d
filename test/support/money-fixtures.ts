import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Money } from '../../src/common/money';
import { verifyLedger } from '../../src/ledger/ledger-invariants';
import { MoneyMovementsService } from '../../src/transactions/money-movements.service';
import { appWithTenants, dataSource, TestTenant } from './test-app';
import { profileBody } from './wallet-fixtures';

/**
 * Helpers for the money-movement tests: client services, wallets under one profile, credits/debits/transfers
 * through the HTTP API, and balance reads straight from the ledger.
 */

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const DECIMAL4 = /^-?\d+\.\d{4}$/;

export function http(app: NestFastifyApplication) {
  return request(app.getHttpServer());
}

export function serviceBody(tenant: TestTenant, overrides: Record<string, unknown> = {}) {
  return {
    client_code: tenant.clientCode,
    client_service_name: 'Wallet payments',
    service_code: 'CUSTOM_SERVICE',
    has_transaction_fee: false,
    minimum_transaction_amount: 1,
    maximum_transaction_amount: 1_000_000,
    is_active: 1,
    ...overrides,
  };
}

/** Creates a client service through the API and returns its code. */
export async function createService(
  app: NestFastifyApplication,
  tenant: TestTenant,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const res = await http(app).post('/api/v1/client-services').set('authorization', tenant.auth).send(serviceBody(tenant, overrides));
  if (res.status !== 201) throw new Error(`client service create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.client_service_code;
}

/** The fee part of a client service body: a fixed fee, or a percentage of the transaction amount. */
export function fixedFee(fee: number) {
  return { has_transaction_fee: true, transaction_fee_type: 'FIXED', transaction_fee: fee };
}

export function percentageFee(percent: number) {
  return { has_transaction_fee: true, transaction_fee_type: 'PERCENTAGE', transaction_fee: percent };
}

export interface MoneyTestBed {
  app: NestFastifyApplication;
  tenant: TestTenant;
  /** A second client, for the checks that one client cannot touch another's wallets or services. */
  other: TestTenant;
  /** The tenant's profile and wallet type; `wallets.create()` opens a wallet. */
  wallets: WalletSet;
  /** A client service of the tenant without fees, bounds 1 to 1,000,000. */
  noFee: string;
}

/** What the money-movement test files start from; each adds the services with fees it needs. */
export async function moneyTestBed(): Promise<MoneyTestBed> {
  const { app, tenant, other } = await appWithTenants();
  const wallets = await walletSet(app, tenant);
  const noFee = await createService(app, tenant);
  return { app, tenant, other, wallets, noFee };
}

export interface WalletSet {
  clientProfileId: string;
  accountTypeCode: string;
  create(overrides?: Record<string, unknown>): Promise<string>;
}

/** One profile and one wallet type; `create` opens wallets under them and returns the account number. */
export async function walletSet(app: NestFastifyApplication, tenant: TestTenant): Promise<WalletSet> {
  const profile = await http(app).post('/api/v1/profiles').set('authorization', tenant.auth).send(profileBody(tenant)).expect(201);
  const type = await http(app)
    .post('/api/v1/account-types')
    .set('authorization', tenant.auth)
    .send({ client_code: tenant.clientCode, account_type_name: 'Main' })
    .expect(201);
  const clientProfileId = profile.body.client_profile_id as string;
  const accountTypeCode = type.body.account_type_code as string;
  return {
    clientProfileId,
    accountTypeCode,
    async create(overrides = {}) {
      const res = await http(app)
        .post('/api/v1/accounts')
        .set('authorization', tenant.auth)
        .send({
          client_code: tenant.clientCode,
          client_profile_id: clientProfileId,
          account_type_code: accountTypeCode,
          account_name: 'Wallet',
          currency: 'KES',
          minimum_balance: 0,
          can_overdraw: false,
          status: 'ACTIVE',
          ...overrides,
        });
      if (res.status !== 201) throw new Error(`wallet create failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.account_number as string;
    },
  };
}

export async function fund(app: NestFastifyApplication, tenant: TestTenant, accountNumber: string, amount: Decimal.Value): Promise<void> {
  await app.get(MoneyMovementsService).fund(tenant.clientId, accountNumber, new Money(amount));
}

/** The stored ledger balance of an account of the tenant (wallet or system account), as "100.0000". */
export async function balance(app: NestFastifyApplication, accountNumber: string): Promise<string> {
  const [row] = await dataSource(app).query('SELECT balance FROM ledger_accounts WHERE account_number = $1', [accountNumber]);
  if (!row) throw new Error(`no ledger account ${accountNumber}`);
  return new Money(row.balance).toFixed(4);
}

export async function balances(app: NestFastifyApplication, accountNumbers: string[]): Promise<string[]> {
  return Promise.all(accountNumbers.map((n) => balance(app, n)));
}

/** A system account (FEE_INCOME, SETTLEMENT, FX_POSITION) of the client; null when never used. */
export async function systemAccount(
  app: NestFastifyApplication,
  clientId: string,
  kind: string,
  currency: string,
): Promise<{ accountNumber: string; balance: string } | null> {
  const [row] = await dataSource(app).query(
    `SELECT account_number, balance FROM ledger_accounts WHERE client_id = $1 AND kind = $2 AND currency = $3`,
    [clientId, kind, currency],
  );
  return row ? { accountNumber: row.account_number, balance: new Money(row.balance).toFixed(4) } : null;
}

export async function feeIncome(app: NestFastifyApplication, clientId: string, currency = 'KES'): Promise<string> {
  return (await systemAccount(app, clientId, 'FEE_INCOME', currency))?.balance ?? '0.0000';
}

/** Counts of the client's journal entries and transaction records: a rejected or replayed request adds none. */
export async function moneyFootprint(app: NestFastifyApplication, clientId: string): Promise<{ entries: number; records: number }> {
  const [row] = await dataSource(app).query(
    `SELECT (SELECT count(*) FROM journal_entries WHERE client_id = $1)::int AS entries,
            (SELECT count(*) FROM wallet_transactions WHERE client_id = $1)::int AS records`,
    [clientId],
  );
  return row;
}

export function ref(prefix = 'ref'): string {
  return `${prefix}-${randomUUID()}`;
}

export function moneyBody(
  tenant: TestTenant,
  accountNumber: string,
  serviceCode: string,
  amount: number | string,
  overrides: Record<string, unknown> = {},
) {
  return {
    account_number: accountNumber,
    client_code: tenant.clientCode,
    client_service_code: serviceCode,
    transaction_amount: amount,
    currency: 'KES',
    source_transaction_id: ref(),
    ...overrides,
  };
}

export function transferBody(
  tenant: TestTenant,
  from: string,
  to: string,
  serviceCode: string,
  amount: number | string,
  overrides: Record<string, unknown> = {},
) {
  return {
    source_account_number: from,
    destination_account_number: to,
    client_code: tenant.clientCode,
    client_service_code: serviceCode,
    transaction_amount: amount,
    currency: 'KES',
    source_transaction_id: ref('tr'),
    transaction_source: 'INTERNAL',
    ...overrides,
  };
}

export function post(app: NestFastifyApplication, tenant: TestTenant, command: 'CREDIT' | 'DEBIT', body: object) {
  return http(app).post(`/api/v1/transactions?command=${command}`).set('authorization', tenant.auth).send(body);
}

export function transfer(app: NestFastifyApplication, tenant: TestTenant, body: object) {
  return http(app).post('/api/v1/account-transfers').set('authorization', tenant.auth).send(body);
}

export function reverse(app: NestFastifyApplication, tenant: TestTenant, transactionId: string, body?: object) {
  const req = http(app).post(`/api/v1/transactions/${transactionId}?command=REVERSE`).set('authorization', tenant.auth);
  return body === undefined ? req : req.send(body);
}

export function d(value: Decimal.Value): Decimal {
  return new Money(value);
}

export function fmt(value: Decimal.Value): string {
  return new Money(value).toFixed(4);
}

/** verifyLedger over the whole database, as one list of violations tagged with their invariant; [] when all hold. */
export async function ledgerViolations(app: NestFastifyApplication): Promise<Array<Record<string, unknown>>> {
  const results = await verifyLedger(dataSource(app).manager);
  return results.flatMap((r) => r.violations.map((v) => ({ invariant: r.name, ...v })));
}
