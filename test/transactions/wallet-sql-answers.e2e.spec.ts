import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Money } from '../../src/common/money';
import { FxService } from '../../src/fx/fx.service';
import { walletFund, WalletFundAnswer, WalletFunding } from '../../src/transactions/money-movements.service';
import { walletReverse, WalletReverseAnswer, WalletReversal } from '../../src/transactions/wallet-reversals.service';
import { TransactionRecords, TransactionRow } from '../../src/transactions/transaction-records';
import { WalletMoneyBatch, WalletMoneyDetails, WalletMoneyOutcome, WalletMoneyRequest } from '../../src/transactions/wallet-money-batch';
import { createService, fixedFee, fund, http, moneyTestBed, ref, walletSet, WalletSet } from '../support/money-fixtures';
import { outcomesWritten } from '../support/sql-outcomes';
import { dataSource, TestTenant } from '../support/test-app';

type FundOutcome = WalletFundAnswer['outcome'];
type ReverseOutcome = WalletReverseAnswer['outcome'];

/**
 * The wallet money functions answer what their TypeScript wrappers declare, the TS types being the one list: every
 * outcome the types name is answered, each refusal's detail carries exactly the fields typed for it, and the SQL
 * writes no outcome the types do not name. The case tables are typed by outcome, so an outcome added on the
 * TypeScript side fails to compile until it has a case here, and one added in SQL fails the source check below.
 */
describe('wallet money functions answer the outcomes their wrappers declare', () => {
  let app: NestFastifyApplication;
  let db: DataSource;
  let tenant: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let batch: WalletMoneyBatch;
  let active: string;
  let dormant: string;
  let suspended: string;
  let deactivated: string;
  let empty: string;
  let mwk: string;

  // Currencies no other test converts: MWK wallets, MZN quoted by base MWK, BWP only stale, BIF never quoted.
  const STALE_AT = '2021-06-07 08:09:10.111999+00';

  beforeAll(async () => {
    ({ app, tenant, wallets, noFee } = await moneyTestBed());
    db = dataSource(app);
    batch = app.get(WalletMoneyBatch);
    [active, empty, dormant, suspended, mwk] = [
      await wallets.create(),
      await wallets.create(),
      await wallets.create({ status: 'DORMANT' }),
      await wallets.create({ status: 'SUSPENDED' }),
      await wallets.create({ currency: 'MWK' }),
    ];
    await fund(app, tenant, active, 1000);
    const closedProfile = await walletSet(app, tenant);
    deactivated = await closedProfile.create();
    await http(app)
      .post(`/api/v1/profiles/client-profile-id/${closedProfile.clientProfileId}?command=DEACTIVATE`)
      .set('authorization', tenant.auth)
      .expect(200);
    const fx = app.get(FxService);
    await fx.setRate('MWK', 'BWP', new Money('10'), new Money('11'), 'test');
    await db.query(`UPDATE fx_rates SET updated_at = $1 WHERE base_currency = 'MWK' AND currency = 'BWP'`, [STALE_AT]);
  });
  afterAll(async () => app.close());

  function request(fields: Partial<WalletMoneyRequest>): WalletMoneyRequest {
    return {
      client_id: tenant.clientId,
      kind: 'CREDIT',
      reference: ref(),
      fingerprint: randomUUID(),
      account_number: active,
      destination_account_number: null,
      amount: '10',
      currency: 'KES',
      service_code: noFee,
      narration: null,
      data: null,
      transaction_date: new Date().toISOString(),
      ...fields,
    };
  }

  type Case<O extends string, R, D> = { [K in O]: () => Promise<{ request: R; detail: D extends Record<K, infer V> ? V : never }> };
  const none = {} as Record<string, never>;

  const batchCases: Case<WalletMoneyOutcome, WalletMoneyRequest, WalletMoneyDetails> = {
    OK: async () => ({ request: request({}), detail: none }),
    REPLAY: async () => {
      const original = request({});
      await batch.submit(original);
      return { request: original, detail: none };
    },
    CONFLICT: async () => {
      const original = request({});
      await batch.submit(original);
      return { request: { ...original, fingerprint: randomUUID() }, detail: none };
    },
    SAME_WALLET: async () => ({ request: request({ kind: 'TRANSFER', destination_account_number: active }), detail: none }),
    WALLET_NOT_FOUND: async () => ({ request: request({ account_number: '0' }), detail: { account_number: '0' } }),
    PROFILE_DEACTIVATED: async () => ({ request: request({ account_number: deactivated }), detail: { account_number: deactivated } }),
    WALLET_STATE: async () => ({
      request: request({ kind: 'DEBIT', account_number: dormant }),
      detail: { account_number: dormant, status: 'DORMANT', role: 'PAY' },
    }),
    CURRENCY_MISMATCH: async () => ({ request: request({ kind: 'TRANSFER', destination_account_number: mwk }), detail: none }),
    SERVICE_NOT_FOUND: async () => ({ request: request({ service_code: 'NO-SUCH-SERVICE' }), detail: none }),
    SERVICE_INACTIVE: async () => {
      const inactive = await createService(app, tenant, { is_active: 0 });
      return { request: request({ service_code: inactive }), detail: { service_code: inactive } };
    },
    NO_RATE: async () => ({
      request: request({ account_number: mwk, currency: 'BIF' }),
      detail: { from_currency: 'BIF', to_currency: 'MWK' },
    }),
    STALE_RATE: async () => {
      // The time as the database writes it into jsonb, in this connection's time zone, to the microsecond.
      const [{ at }] = await db.query(`SELECT to_jsonb($1::timestamptz) #>> '{}' AS at`, [STALE_AT]);
      return {
        request: request({ account_number: mwk, currency: 'BWP' }),
        detail: { from_currency: 'BWP', to_currency: 'MWK', newest_rate_at: at, max_age_ms: expect.any(Number) },
      };
    },
    TOO_SMALL: async () => {
      await app.get(FxService).setRate('MWK', 'MZN', new Money('0.0001'), new Money('0.0002'), 'test');
      return { request: request({ account_number: mwk, currency: 'MZN', amount: '0.0001' }), detail: none };
    },
    AMOUNT_BOUNDS: async () => ({
      request: request({ amount: '0.5' }),
      detail: { minimum: '1.0000', maximum: '1000000.0000', currency: 'KES' },
    }),
    FEE_TOO_HIGH: async () => {
      const fixed = await createService(app, tenant, fixedFee(5));
      return { request: request({ amount: '5', service_code: fixed }), detail: { fee: '5.0000' } };
    },
    INSUFFICIENT: async () => ({ request: request({ kind: 'DEBIT', account_number: empty }), detail: { account_number: empty } }),
  };

  it.each(Object.keys(batchCases) as WalletMoneyOutcome[])('wallet_money_batch: %s', async (outcome) => {
    const { request, detail } = await batchCases[outcome]();
    const answer = await batch.submit(request);
    expect({ outcome: answer.outcome, detail: answer.detail }).toEqual({ outcome, detail });
    expect(answer.records === null).toBe(outcome !== 'OK' && outcome !== 'REPLAY');
  });

  const funding = (accountNumber: string): WalletFunding => ({
    clientId: tenant.clientId,
    accountNumber,
    amount: new Money('1'),
    fingerprint: randomUUID(),
    narration: 'Wallet funding',
    transactionDate: new Date(),
  });
  const fundCases: Case<FundOutcome, WalletFunding, WalletMoneyDetails> = {
    OK: async () => ({ request: funding(active), detail: none }),
    WALLET_NOT_FOUND: async () => ({ request: funding('0'), detail: { account_number: '0' } }),
    PROFILE_DEACTIVATED: async () => ({ request: funding(deactivated), detail: { account_number: deactivated } }),
    WALLET_STATE: async () => ({
      request: funding(suspended),
      detail: { account_number: suspended, status: 'SUSPENDED', role: 'RECEIVE' },
    }),
  };

  it.each(Object.keys(fundCases) as FundOutcome[])('wallet_fund: %s', async (outcome) => {
    const { request, detail } = await fundCases[outcome]();
    const answer = await walletFund(db, request);
    expect({ outcome: answer.outcome, detail: answer.detail }).toEqual({ outcome, detail });
    expect(answer.records === null).toBe(outcome !== 'OK');
  });

  /** A credit of the active wallet, and the id of its record. */
  async function credited(): Promise<{ reference: string; transactionId: string }> {
    const credit = request({});
    const answer = await batch.submit(credit);
    if (answer.outcome !== 'OK') throw new Error(`credit answered ${answer.outcome}`);
    return { reference: credit.reference, transactionId: answer.records[0].id };
  }
  const reversal = (transactionId: string | null, reference: string | null = ref('rev')): WalletReversal => ({
    clientId: tenant.clientId,
    transactionId,
    reference,
    fingerprint: `${transactionId}:${reference}`,
    narration: null,
  });
  const reverseCases: Case<ReverseOutcome, WalletReversal, Record<ReverseOutcome, undefined>> = {
    REVERSED: async () => ({ request: reversal((await credited()).transactionId), detail: undefined }),
    REPLAY: async () => {
      const first = reversal((await credited()).transactionId);
      await walletReverse(db, first);
      return { request: first, detail: undefined };
    },
    REFERENCE_REUSED: async () => {
      const credit = await credited();
      return { request: reversal(credit.transactionId, credit.reference), detail: undefined };
    },
    NOT_FOUND: async () => ({ request: reversal(randomUUID()), detail: undefined }),
    REVERSAL_OF_REVERSAL: async () => {
      const answer = await walletReverse(db, reversal((await credited()).transactionId));
      if (answer.outcome !== 'REVERSED') throw new Error(`reversal answered ${answer.outcome}`);
      return { request: reversal(answer.records[0].id), detail: undefined };
    },
    ALREADY_REVERSED: async () => {
      const { transactionId } = await credited();
      await walletReverse(db, reversal(transactionId));
      return { request: reversal(transactionId), detail: undefined };
    },
  };

  it.each(Object.keys(reverseCases) as ReverseOutcome[])('wallet_reverse: %s', async (outcome) => {
    const { request } = await reverseCases[outcome]();
    const answer = await walletReverse(db, request);
    expect(answer.outcome).toBe(outcome);
    expect(answer.records === null).toBe(outcome !== 'REVERSED' && outcome !== 'REPLAY');
  });

  /** TransactionRow's fields: a Record literal, so the compiler holds this list to the interface both ways. */
  const ROW_FIELDS: Record<keyof TransactionRow, true> = {
    id: true,
    operation_id: true,
    operation_kind: true,
    account_id: true,
    account_number: true,
    account_kind: true,
    client_service_code: true,
    transaction_type: true,
    transaction_source: true,
    currency: true,
    transaction_amount: true,
    transaction_fee: true,
    previous_balance: true,
    current_balance: true,
    other_party_account: true,
    other_party_transaction_hash: true,
    source_transaction_id: true,
    source_transaction_data: true,
    transaction_narration: true,
    transaction_date: true,
    original_currency: true,
    original_amount: true,
    exchange_rate: true,
  };
  const fields = (row: object) => Object.keys(row).sort();

  it('every field of a request reaches its record, and every record has the fields TransactionRow declares', async () => {
    const payee = await wallets.create();
    const sent = request({
      kind: 'TRANSFER',
      destination_account_number: payee,
      amount: '12.3456',
      narration: 'named fields',
      data: { order: 42, tags: ['a'] },
      transaction_date: '2024-03-01T10:15:00.123Z',
    });
    const answer = await batch.submit(sent);
    if (answer.outcome !== 'OK') throw new Error(`transfer answered ${answer.outcome}`);
    expect(answer.records.map((r) => [r.transaction_type, r.account_number, r.other_party_account])).toEqual([
      ['DEBIT', active, payee],
      ['CREDIT', payee, active],
    ]);
    for (const record of answer.records) {
      expect(record).toMatchObject({
        operation_kind: 'TRANSFER',
        client_service_code: noFee,
        currency: 'KES',
        transaction_amount: '12.3456',
        source_transaction_id: sent.reference,
        source_transaction_data: sent.data,
        transaction_narration: 'named fields',
      });
      expect(new Date(record.transaction_date).toISOString()).toBe(sent.transaction_date);
      expect(fields(record)).toEqual(fields(ROW_FIELDS));
    }

    const funded = await walletFund(db, funding(payee));
    const reversed = await walletReverse(db, reversal(answer.records[0].id));
    const records = app.get(TransactionRecords);
    const byId = await records.byId(db.manager, tenant.clientId, answer.records[1].id);
    const [paged] = await records.ofAccount(db.manager, {
      clientId: tenant.clientId,
      accountId: answer.records[1].account_id,
      from: null,
      until: null,
      after: null,
      limit: 1,
    });
    const { cursor_at, ...pagedRow } = paged;
    expect(cursor_at).toEqual(expect.any(String));
    for (const row of [...funded.records!, ...reversed.records!, byId!, pagedRow]) expect(fields(row)).toEqual(fields(ROW_FIELDS));
    expect({ ...byId, transaction_date: new Date(byId!.transaction_date).toISOString() }).toEqual({
      ...answer.records[1],
      transaction_date: sent.transaction_date,
    });
  });

  /** The outcomes each function's source writes, as it sets them (`outcome := '…'`, …: outcomesWritten). */
  it.each([
    ['transactions/sql/wallet_money_batch.sql', () => Object.keys(batchCases)],
    ['transactions/sql/wallet_fund.sql', () => Object.keys(fundCases)],
    ['transactions/sql/wallet_reverse.sql', () => Object.keys(reverseCases)],
  ])('%s writes exactly the outcomes its wrapper declares', (file, declared) => {
    expect(outcomesWritten(file)).toEqual(declared().sort());
  });
});
