import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import fc from 'fast-check';
import { Money } from '../../src/common/money';
import { createTenant, createTestApp, TestTenant } from '../support/test-app';
import {
  balances,
  createService,
  feeIncome,
  fund,
  ledgerViolations,
  moneyBody,
  post,
  reverse,
  transfer,
  transferBody,
  walletSet,
} from '../support/money-fixtures';

/**
 * Random sequences of credits, debits, transfers, reversals and replays, run over HTTP against three wallets of
 * a fresh tenant, checked against a plain in-memory model of the balances. After each run the stored balances
 * must equal the model and the ledger invariants (a)-(e) must hold.
 */

const FEE_PERCENT = new Money('1.5');
const START = new Money('300');

/** The wallets of a run: a plain one, one with a floor of 50, and one that may overdraw. */
const WALLETS = [
  { minimum_balance: 0, can_overdraw: false },
  { minimum_balance: 50, can_overdraw: false },
  { minimum_balance: 0, can_overdraw: true },
] as const;

type Command =
  | { kind: 'CREDIT' | 'DEBIT'; wallet: number; amount: string }
  | { kind: 'TRANSFER'; from: number; to: number; amount: string }
  | { kind: 'REVERSE'; pick: number; leg: 0 | 1 }
  | { kind: 'REPLAY'; pick: number };

/** Amounts from 0.0001 to 400 with up to four decimals, biased to small ones so floors are reached. */
const amountArb = fc.oneof(
  fc.integer({ min: 1, max: 4_000_000 }).map((n) => new Money(n).div(10_000).toFixed()),
  fc.integer({ min: 1, max: 400 }).map(String),
);
const walletArb = fc.integer({ min: 0, max: WALLETS.length - 1 });
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('CREDIT' as const), wallet: walletArb, amount: amountArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('DEBIT' as const), wallet: walletArb, amount: amountArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('TRANSFER' as const), from: walletArb, to: walletArb, amount: amountArb }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('REVERSE' as const), pick: fc.nat(), leg: fc.constantFrom(0 as const, 1 as const) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('REPLAY' as const), pick: fc.nat() }) },
);

/** A successful operation as the model remembers it. */
interface Done {
  kind: 'CREDIT' | 'DEBIT' | 'TRANSFER' | 'REVERSAL';
  /** Balance change per wallet index. */
  deltas: Map<number, Decimal>;
  fee: Decimal;
  ids: string[];
  reversed: boolean;
  /** What to resend for a replay, and the transaction ids it must answer with. */
  replay?: { command: 'CREDIT' | 'DEBIT' | 'TRANSFER'; body: object };
}

function feeOf(amount: Decimal): Decimal {
  return amount.times(FEE_PERCENT).div(100).toDecimalPlaces(4, Decimal.ROUND_HALF_UP);
}

class Model {
  readonly balances = WALLETS.map(() => START);
  fees = new Money(0);
  readonly done: Done[] = [];

  /** Whether applying the deltas keeps every wallet that loses money at or above its floor. */
  allows(deltas: Map<number, Decimal>): boolean {
    for (const [w, delta] of deltas) {
      if (delta.isNegative() && !WALLETS[w].can_overdraw && this.balances[w].plus(delta).lt(WALLETS[w].minimum_balance)) return false;
    }
    return true;
  }

  apply(deltas: Map<number, Decimal>, fee: Decimal): void {
    for (const [w, delta] of deltas) this.balances[w] = this.balances[w].plus(delta);
    this.fees = this.fees.plus(fee);
  }
}

describe('ledger model (property)', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => (app = await createTestApp()));
  afterAll(async () => app.close());

  async function run(commands: Command[]): Promise<void> {
    const tenant: TestTenant = await createTenant(app);
    const set = await walletSet(app, tenant);
    const accounts: string[] = [];
    for (const options of WALLETS) accounts.push(await set.create(options));
    for (const account of accounts) await fund(app, tenant, account, START);
    const service = await createService(app, tenant, {
      has_transaction_fee: true,
      transaction_fee_type: 'PERCENTAGE',
      transaction_fee: FEE_PERCENT.toNumber(),
      minimum_transaction_amount: 0.0001,
      maximum_transaction_amount: 1000,
    });
    const model = new Model();
    const log: string[] = [];

    for (const command of commands) {
      const step = await execute(tenant, accounts, service, model, command);
      log.push(`${JSON.stringify(command)} → ${step}`);
      const stored = await balances(app, accounts);
      const expected = model.balances.map((b) => b.toFixed(4));
      if (JSON.stringify(stored) !== JSON.stringify(expected)) {
        throw new Error(`balances ${JSON.stringify(stored)} differ from the model ${JSON.stringify(expected)} after:\n${log.join('\n')}`);
      }
    }
    expect(await balances(app, accounts)).toEqual(model.balances.map((b) => b.toFixed(4)));
    expect(await feeIncome(app, tenant.clientId)).toBe(model.fees.toFixed(4));
    expect(await ledgerViolations(app)).toEqual([]);
  }

  async function execute(tenant: TestTenant, accounts: string[], service: string, model: Model, command: Command): Promise<string> {
    switch (command.kind) {
      case 'CREDIT':
      case 'DEBIT': {
        const amount = new Money(command.amount);
        const fee = feeOf(amount);
        const delta = command.kind === 'CREDIT' ? amount.minus(fee) : amount.plus(fee).negated();
        const deltas = new Map([[command.wallet, delta]]);
        const body = moneyBody(tenant, accounts[command.wallet], service, command.amount);
        const res = await post(app, tenant, command.kind, body);
        if (command.kind === 'CREDIT' && fee.gte(amount)) return expectStatus(res, 400);
        if (!model.allows(deltas)) {
          expectStatus(res, 400);
          expect(res.body.message).toMatch(/^Insufficient balance/);
          return '400';
        }
        expectStatus(res, 201);
        expect(res.body.transaction_fee).toBe(fee.toFixed(4));
        expect(res.body.current_balance).toBe(model.balances[command.wallet].plus(delta).toFixed(4));
        model.apply(deltas, fee);
        model.done.push({
          kind: command.kind,
          deltas,
          fee,
          ids: [res.body.transaction_id],
          reversed: false,
          replay: { command: command.kind, body },
        });
        return '201';
      }
      case 'TRANSFER': {
        const amount = new Money(command.amount);
        const fee = feeOf(amount);
        const body = transferBody(tenant, accounts[command.from], accounts[command.to], service, command.amount);
        const res = await transfer(app, tenant, body);
        if (command.from === command.to) return expectStatus(res, 400);
        const deltas = new Map([
          [command.from, amount.plus(fee).negated()],
          [command.to, amount],
        ]);
        if (!model.allows(deltas)) {
          expectStatus(res, 400);
          expect(res.body.message).toMatch(/^Insufficient balance/);
          return '400';
        }
        expectStatus(res, 201);
        model.apply(deltas, fee);
        model.done.push({
          kind: 'TRANSFER',
          deltas,
          fee,
          ids: [res.body.source_transaction.transaction_id, res.body.destination_transaction.transaction_id],
          reversed: false,
          replay: { command: 'TRANSFER', body },
        });
        return '201';
      }
      case 'REVERSE': {
        if (model.done.length === 0) return 'skipped';
        const target = model.done[command.pick % model.done.length];
        const id = target.ids[command.leg % target.ids.length];
        const res = await reverse(app, tenant, id);
        if (target.kind === 'REVERSAL') return expectStatus(res, 400);
        if (target.reversed) {
          expectStatus(res, 409);
          expect(res.body.message).toBe('Transaction already reversed');
          return '409';
        }
        const undo = new Map([...target.deltas].map(([w, delta]) => [w, delta.negated()]));
        if (!model.allows(undo)) return expectStatus(res, 400);
        expectStatus(res, 201);
        model.apply(undo, target.fee.negated());
        target.reversed = true;
        const walletIds = [res.body.source_transaction, res.body.destination_transaction]
          .filter((r: { account: string }) => accounts.includes(r.account))
          .map((r: { transaction_id: string }) => r.transaction_id);
        model.done.push({ kind: 'REVERSAL', deltas: undo, fee: target.fee.negated(), ids: walletIds, reversed: false });
        return '201';
      }
      case 'REPLAY': {
        const replayable = model.done.filter((d) => d.replay);
        if (replayable.length === 0) return 'skipped';
        const target = replayable[command.pick % replayable.length];
        const { command: kind, body } = target.replay!;
        const res = kind === 'TRANSFER' ? await transfer(app, tenant, body) : await post(app, tenant, kind, body);
        expect([200, 201]).toContain(res.status);
        const ids =
          kind === 'TRANSFER'
            ? [res.body.source_transaction.transaction_id, res.body.destination_transaction.transaction_id]
            : [res.body.transaction_id];
        expect(ids).toEqual(target.ids);
        return String(res.status);
      }
    }
  }

  function expectStatus(res: { status: number; body: unknown }, status: number): string {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
    return String(status);
  }

  it('random sequences keep balances equal to the model and the ledger invariants true', async () => {
    const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 25 }), (commands) => run(commands)),
      { numRuns: 30, seed, endOnFailure: true },
    );
  }, 600_000);
});
