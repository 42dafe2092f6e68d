import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { Money } from '../../src/common/money';
import { JOURNAL_ENTRY_KIND } from '../../src/ledger/journal-entry-kind';
import { LedgerAccount } from '../../src/ledger/ledger-account';
import { verifyLedger } from '../../src/ledger/ledger-invariants';
import { FloorBreachError, UnbalancedEntryError, UnknownLedgerAccountError, UnknownLedgerEntryError } from '../../src/ledger/ledger.errors';
import { LedgerService } from '../../src/ledger/ledger.service';
import {
  balanceOf,
  EntryToPost,
  ledgerPostEntry,
  ledgerSystemAccount,
  openLedgerWallet,
  postEntryWithOperation,
  recordFundingOperation,
  settlementAccount,
} from '../support/ledger-fixtures';
import { appWithTenants, createTenant, dataSource, TestTenant } from '../support/test-app';

const m = (value: string) => new Money(value);

describe('the ledger (double-entry core, provider contract §3)', () => {
  let app: NestFastifyApplication;
  let ledger: LedgerService;
  let db: DataSource;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    ({ app, tenant, other } = await appWithTenants());
    ledger = app.get(LedgerService);
    db = dataSource(app);
  });
  afterAll(async () => app.close());

  /** Everything the ledger and its business records hold for a client; compared before and after a rejection. */
  async function snapshot(clientId: string) {
    const [counts] = await db.query(
      `SELECT (SELECT count(*) FROM journal_entries WHERE client_id = $1)::int AS entries,
              (SELECT count(*) FROM postings p JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.account_id WHERE a.client_id = $1)::int AS postings,
              (SELECT count(*) FROM wallet_operations WHERE client_id = $1)::int AS operations`,
      [clientId],
    );
    const balances = await db.query('SELECT id, balance FROM ledger_accounts WHERE client_id = $1 ORDER BY id', [clientId]);
    return { ...counts, balances };
  }

  const transfer = (clientId: string, from: Pick<LedgerAccount, 'id'>, to: Pick<LedgerAccount, 'id'>, amount: string): EntryToPost => ({
    clientId,
    kind: JOURNAL_ENTRY_KIND.WALLET_TRANSFER,
    lines: [
      { accountId: from.id, amount: m(amount).neg() },
      { accountId: to.id, amount: m(amount) },
    ],
  });

  describe('a balanced entry', () => {
    it('moves both balances and writes one posting per account with its balance_after', async () => {
      const wallet = await openLedgerWallet(app, tenant.clientId);
      const settlement = await settlementAccount(app, tenant.clientId, 'KES');
      const settlementBefore = m(await balanceOf(app, settlement.id));

      const funded = await postEntryWithOperation(app, transfer(tenant.clientId, settlement, wallet, '100.5'));
      expect(funded.entryId).toMatch(/^\d+$/);
      const walletMove = funded.movements.get(wallet.id)!;
      expect([walletMove.amount.toFixed(4), walletMove.balanceBefore.toFixed(4), walletMove.balanceAfter.toFixed(4)]).toEqual([
        '100.5000',
        '0.0000',
        '100.5000',
      ]);
      const settlementMove = funded.movements.get(settlement.id)!;
      expect(settlementMove.balanceBefore.toFixed(4)).toBe(settlementBefore.toFixed(4));
      expect(settlementMove.balanceAfter.toFixed(4)).toBe(settlementBefore.minus('100.5').toFixed(4));

      const target = await openLedgerWallet(app, tenant.clientId);
      const moved = await postEntryWithOperation(app, transfer(tenant.clientId, wallet, target, '30.25'));

      expect(await balanceOf(app, wallet.id)).toBe('70.2500');
      expect(await balanceOf(app, target.id)).toBe('30.2500');
      expect(await balanceOf(app, settlement.id)).toBe(settlementBefore.minus('100.5').toFixed(4));

      const postings = await db.query(
        `SELECT account_id, currency, amount, balance_after FROM postings WHERE entry_id = $1 ORDER BY amount`,
        [moved.entryId],
      );
      expect(postings).toEqual([
        { account_id: wallet.id, currency: 'KES', amount: '-30.2500', balance_after: '70.2500' },
        { account_id: target.id, currency: 'KES', amount: '30.2500', balance_after: '30.2500' },
      ]);
      const [entry] = await db.query('SELECT client_id, kind FROM journal_entries WHERE id = $1', [moved.entryId]);
      expect(entry).toEqual({ client_id: tenant.clientId, kind: JOURNAL_ENTRY_KIND.WALLET_TRANSFER });
    });

    it('an entry balanced in each of two currencies is accepted (FX legs)', async () => {
      const kes = await openLedgerWallet(app, tenant.clientId, { currency: 'KES' });
      const usd = await openLedgerWallet(app, tenant.clientId, { currency: 'USD', initialBalance: '10' });
      const fxKes = await ledgerSystemAccount(db.manager, tenant.clientId, 'FX_POSITION', 'KES');
      const fxUsd = await ledgerSystemAccount(db.manager, tenant.clientId, 'FX_POSITION', 'USD');
      await postEntryWithOperation(app, {
        clientId: tenant.clientId,
        kind: JOURNAL_ENTRY_KIND.WALLET_CREDIT,
        lines: [
          { accountId: usd.id, amount: m('-10') },
          { accountId: fxUsd.id, amount: m('10') },
          { accountId: fxKes.id, amount: m('-1285') },
          { accountId: kes.id, amount: m('1285') },
        ],
      });
      expect(await balanceOf(app, usd.id)).toBe('0.0000');
      expect(await balanceOf(app, kes.id)).toBe('1285.0000');
    });
  });

  describe('rejected entries write nothing', () => {
    it('postings that do not sum to zero → UnbalancedEntryError', async () => {
      const a = await openLedgerWallet(app, tenant.clientId, { initialBalance: '50' });
      const b = await openLedgerWallet(app, tenant.clientId);
      const before = await snapshot(tenant.clientId);
      await expect(
        postEntryWithOperation(app, {
          clientId: tenant.clientId,
          kind: JOURNAL_ENTRY_KIND.WALLET_TRANSFER,
          lines: [
            { accountId: a.id, amount: m('-10') },
            { accountId: b.id, amount: m('9.9999') },
          ],
        }),
      ).rejects.toBeInstanceOf(UnbalancedEntryError);
      expect(await snapshot(tenant.clientId)).toEqual(before);
    });

    it('an entry that sums to zero overall but not per currency → UnbalancedEntryError', async () => {
      const kes = await openLedgerWallet(app, tenant.clientId, { currency: 'KES', initialBalance: '100' });
      const usd = await openLedgerWallet(app, tenant.clientId, { currency: 'USD' });
      const before = await snapshot(tenant.clientId);
      await expect(postEntryWithOperation(app, transfer(tenant.clientId, kes, usd, '100'))).rejects.toBeInstanceOf(UnbalancedEntryError);
      expect(await snapshot(tenant.clientId)).toEqual(before);
      expect(await balanceOf(app, kes.id)).toBe('100.0000');
      expect(await balanceOf(app, usd.id)).toBe('0.0000');
    });

    it('an entry on a single account, or with more than 4 decimals → UnbalancedEntryError', async () => {
      const a = await openLedgerWallet(app, tenant.clientId, { initialBalance: '5' });
      const b = await openLedgerWallet(app, tenant.clientId);
      const before = await snapshot(tenant.clientId);
      await expect(
        postEntryWithOperation(app, {
          clientId: tenant.clientId,
          kind: JOURNAL_ENTRY_KIND.WALLET_TRANSFER,
          lines: [
            { accountId: a.id, amount: m('-1') },
            { accountId: a.id, amount: m('1') },
          ],
        }),
      ).rejects.toBeInstanceOf(UnbalancedEntryError);
      await expect(postEntryWithOperation(app, transfer(tenant.clientId, a, b, '0.00001'))).rejects.toBeInstanceOf(UnbalancedEntryError);
      expect(await snapshot(tenant.clientId)).toEqual(before);
    });

    it("an entry naming another client's account → UnknownLedgerAccountError, neither client changes", async () => {
      const mine = await openLedgerWallet(app, tenant.clientId, { initialBalance: '20' });
      const theirs = await openLedgerWallet(app, other.clientId, { initialBalance: '20' });
      const mineBefore = await snapshot(tenant.clientId);
      const theirsBefore = await snapshot(other.clientId);

      await expect(postEntryWithOperation(app, transfer(tenant.clientId, mine, theirs, '5'))).rejects.toBeInstanceOf(
        UnknownLedgerAccountError,
      );
      await expect(postEntryWithOperation(app, transfer(tenant.clientId, theirs, mine, '5'))).rejects.toBeInstanceOf(
        UnknownLedgerAccountError,
      );
      // Posted in the other client's name, the entry still names an account that is not theirs.
      await expect(postEntryWithOperation(app, transfer(other.clientId, theirs, mine, '5'))).rejects.toBeInstanceOf(
        UnknownLedgerAccountError,
      );
      await expect(postEntryWithOperation(app, transfer(tenant.clientId, mine, { ...mine, id: randomUUID() }, '5'))).rejects.toBeInstanceOf(
        UnknownLedgerAccountError,
      );

      expect(await snapshot(tenant.clientId)).toEqual(mineBefore);
      expect(await snapshot(other.clientId)).toEqual(theirsBefore);
    });
  });

  describe('floors', () => {
    it('a debit that would take a wallet below minimum_balance → FloorBreachError naming it; down to the floor is fine', async () => {
      const wallet = await openLedgerWallet(app, tenant.clientId, { minimumBalance: '50', initialBalance: '100' });
      const sink = await openLedgerWallet(app, tenant.clientId);
      const before = await snapshot(tenant.clientId);

      const attempt = postEntryWithOperation(app, transfer(tenant.clientId, wallet, sink, '50.0001'));
      await expect(attempt).rejects.toBeInstanceOf(FloorBreachError);
      await expect(attempt).rejects.toMatchObject({ accountNumber: wallet.accountNumber });
      expect(await snapshot(tenant.clientId)).toEqual(before);

      await postEntryWithOperation(app, transfer(tenant.clientId, wallet, sink, '50'));
      expect(await balanceOf(app, wallet.id)).toBe('50.0000');
      await expect(postEntryWithOperation(app, transfer(tenant.clientId, wallet, sink, '0.0001'))).rejects.toBeInstanceOf(FloorBreachError);
    });

    it('a zero floor refuses the smallest overdraft', async () => {
      const wallet = await openLedgerWallet(app, tenant.clientId);
      const sink = await openLedgerWallet(app, tenant.clientId);
      await expect(postEntryWithOperation(app, transfer(tenant.clientId, wallet, sink, '0.0001'))).rejects.toBeInstanceOf(FloorBreachError);
      expect(await balanceOf(app, wallet.id)).toBe('0.0000');
    });

    it('can_overdraw lets a wallet go below its floor, even below zero', async () => {
      const wallet = await openLedgerWallet(app, tenant.clientId, { minimumBalance: '10', canOverdraw: true });
      const sink = await openLedgerWallet(app, tenant.clientId);
      const posted = await postEntryWithOperation(app, transfer(tenant.clientId, wallet, sink, '30'));
      expect(posted.movements.get(wallet.id)!.balanceAfter.toFixed(4)).toBe('-30.0000');
      expect(await balanceOf(app, wallet.id)).toBe('-30.0000');
    });

    it('a system account (SETTLEMENT) may go negative', async () => {
      const tenant2 = await createTenant(app);
      const settlement = await settlementAccount(app, tenant2.clientId, 'KES');
      const wallet = await openLedgerWallet(app, tenant2.clientId);
      await postEntryWithOperation(app, transfer(tenant2.clientId, settlement, wallet, '999'));
      expect(await balanceOf(app, settlement.id)).toBe('-999.0000');
    });
  });

  describe('system accounts', () => {
    it('exist once per (client, kind, currency)', async () => {
      const t = await createTenant(app);
      const first = await ledgerSystemAccount(db.manager, t.clientId, 'FEE_INCOME', 'KES');
      const again = await db.transaction((manager) => ledgerSystemAccount(manager, t.clientId, 'FEE_INCOME', 'KES'));
      expect(again.id).toBe(first.id);
      expect(first).toMatchObject({ kind: 'FEE_INCOME', currency: 'KES' });
      const [stored] = await db.query('SELECT client_id, can_overdraw FROM ledger_accounts WHERE id = $1', [first.id]);
      expect(stored).toEqual({ client_id: t.clientId, can_overdraw: true });
      expect(first.accountNumber).toMatch(/^\d+$/);

      const otherCurrency = await ledgerSystemAccount(db.manager, t.clientId, 'FEE_INCOME', 'USD');
      const otherKind = await ledgerSystemAccount(db.manager, t.clientId, 'SETTLEMENT', 'KES');
      const otherClient = await ledgerSystemAccount(db.manager, other.clientId, 'FEE_INCOME', 'KES');
      expect(new Set([first.id, otherCurrency.id, otherKind.id, otherClient.id]).size).toBe(4);

      const rows = await db.query(`SELECT kind, currency FROM ledger_accounts WHERE client_id = $1 ORDER BY kind, currency`, [t.clientId]);
      expect(rows).toEqual([
        { kind: 'FEE_INCOME', currency: 'KES' },
        { kind: 'FEE_INCOME', currency: 'USD' },
        { kind: 'SETTLEMENT', currency: 'KES' },
      ]);
    });

    it('first use from many transactions at once still creates exactly one', async () => {
      const t = await createTenant(app);
      const ids = await Promise.all(
        Array.from({ length: 12 }, () => db.transaction((manager) => ledgerSystemAccount(manager, t.clientId, 'IN_FLIGHT_BANK', 'UGX'))),
      );
      expect(new Set(ids.map((a) => a.id)).size).toBe(1);
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM ledger_accounts WHERE client_id = $1 AND kind = 'IN_FLIGHT_BANK'`, [
        t.clientId,
      ]);
      expect(n).toBe(1);
    });

    it('one created in a transaction that rolled back is not handed out afterwards', async () => {
      const t = await createTenant(app);
      let ghost: { id: string } | undefined;
      await expect(
        db.transaction(async (manager) => {
          ghost = await ledgerSystemAccount(manager, t.clientId, 'IN_FLIGHT_AIRTIME', 'KES');
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      const real = await ledgerSystemAccount(db.manager, t.clientId, 'IN_FLIGHT_AIRTIME', 'KES');
      expect(real.id).not.toBe(ghost!.id);
      const [row] = await db.query('SELECT id FROM ledger_accounts WHERE id = $1', [real.id]);
      expect(row).toEqual({ id: real.id });
      // And it is usable: an entry on it posts.
      const wallet = await openLedgerWallet(app, t.clientId);
      await postEntryWithOperation(app, transfer(t.clientId, real, wallet, '1'));
      expect(await balanceOf(app, wallet.id)).toBe('1.0000');
    });
  });

  describe('concurrency', () => {
    it('50 concurrent entries moving money A→B and B→A at once all succeed (ordered locks, no deadlock)', async () => {
      const t = await createTenant(app);
      const a = await openLedgerWallet(app, t.clientId, { initialBalance: '1000' });
      const b = await openLedgerWallet(app, t.clientId, { initialBalance: '1000' });
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          postEntryWithOperation(app, i % 2 === 0 ? transfer(t.clientId, a, b, `${i + 1}`) : transfer(t.clientId, b, a, `${i + 1}`)),
        ),
      );
      const failures = results
        .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        .map((r) => String(r.reason?.code ?? r.reason));
      expect(failures).toEqual([]);
      // A sends 1+3+…+49 = 625 and receives 2+4+…+50 = 650.
      expect(await balanceOf(app, a.id)).toBe('1025.0000');
      expect(await balanceOf(app, b.id)).toBe('975.0000');
      // Each posting's number is its place in the order the entries took the account's lock: numbered 1 .. 51 and
      // its count kept, every running balance the one before it plus its amount.
      for (const account of [a, b]) {
        const postings: Array<{ account_seq: string; amount: string; balance_after: string }> = await db.query(
          `SELECT account_seq, amount, balance_after FROM postings WHERE client_id = $1 AND account_id = $2 ORDER BY account_seq`,
          [t.clientId, account.id],
        );
        expect(postings.map((p) => Number(p.account_seq))).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
        postings.reduce((before, p) => {
          expect(p.balance_after).toBe(before.plus(p.amount).toFixed(4));
          return m(p.balance_after);
        }, m('0'));
        const [{ posting_count: count }] = await db.query(`SELECT posting_count FROM ledger_accounts WHERE client_id = $1 AND id = $2`, [
          t.clientId,
          account.id,
        ]);
        expect(count).toBe('51');
      }
    });

    it('100 parallel debits on a wallet funded for exactly 60: 60 succeed, 40 hit the floor, balance exact, invariants hold', async () => {
      const t = await createTenant(app);
      const unit = '1.2345';
      const wallet = await openLedgerWallet(app, t.clientId, { initialBalance: m(unit).times(60).toFixed(4) });
      const sink = await openLedgerWallet(app, t.clientId);

      const results = await Promise.allSettled(
        Array.from({ length: 100 }, () => postEntryWithOperation(app, transfer(t.clientId, wallet, sink, unit))),
      );
      const succeeded = results.filter((r) => r.status === 'fulfilled');
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(succeeded).toHaveLength(60);
      expect(failed).toHaveLength(40);
      for (const failure of failed) expect(failure.reason).toBeInstanceOf(FloorBreachError);

      expect(await balanceOf(app, wallet.id)).toBe('0.0000');
      expect(await balanceOf(app, sink.id)).toBe('74.0700');

      // Each successful debit saw the one before it: the running balances step down by exactly one unit.
      const afters: Array<{ balance_after: string }> = await db.query(
        `SELECT balance_after FROM postings WHERE account_id = $1 AND amount < 0 ORDER BY balance_after DESC`,
        [wallet.id],
      );
      expect(afters.map((r) => r.balance_after)).toEqual(
        Array.from({ length: 60 }, (_, i) =>
          m(unit)
            .times(59 - i)
            .toFixed(4),
        ),
      );
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM wallet_operations WHERE client_id = $1`, [t.clientId]);
      expect(n).toBe(61);

      const invariants = await verifyLedger(db.manager);
      expect(invariants.map((i) => i.name)).toEqual([
        'a_entries_balance',
        'b_balances_match_postings',
        'c_no_debit_below_floor',
        'd_one_entry_per_business_record',
        'e_postings_numbered_per_account',
      ]);
      for (const invariant of invariants)
        expect({ name: invariant.name, violations: invariant.violations }).toEqual({ name: invariant.name, violations: [] });
    });
  });

  describe('reverseEntry', () => {
    /** Reverses inside a transaction that also writes the reversal's business record, as every caller does. */
    const reverse = (clientId: string, entryId: string) =>
      db.transaction(async (manager) => {
        const posted = await ledger.reverseEntry(manager, clientId, entryId, JOURNAL_ENTRY_KIND.WALLET_REVERSAL);
        await recordFundingOperation(manager, clientId, posted.entryId);
        return posted;
      });

    it('posts the exact negation of every posting of the entry, restoring each balance', async () => {
      const a = await openLedgerWallet(app, tenant.clientId, { initialBalance: '50' });
      const b = await openLedgerWallet(app, tenant.clientId);
      const c = await openLedgerWallet(app, tenant.clientId);
      const original = await postEntryWithOperation(app, {
        clientId: tenant.clientId,
        kind: JOURNAL_ENTRY_KIND.PAYMENT_SPLIT,
        lines: [
          { accountId: a.id, amount: m('-30.1234') },
          { accountId: b.id, amount: m('20') },
          { accountId: c.id, amount: m('10.1234') },
        ],
      });

      const reversed = await reverse(tenant.clientId, original.entryId);

      expect(reversed.entryId).not.toBe(original.entryId);
      const postingsOf = (entryId: string) =>
        db.query(`SELECT account_id, amount FROM postings WHERE entry_id = $1 ORDER BY account_id`, [entryId]);
      const negated = (await postingsOf(original.entryId)).map((p: { account_id: string; amount: string }) => ({
        account_id: p.account_id,
        amount: m(p.amount).neg().toFixed(4),
      }));
      expect(await postingsOf(reversed.entryId)).toEqual(negated);
      expect([await balanceOf(app, a.id), await balanceOf(app, b.id), await balanceOf(app, c.id)]).toEqual(['50.0000', '0.0000', '0.0000']);
      const [entry] = await db.query(`SELECT kind, client_id FROM journal_entries WHERE id = $1`, [reversed.entryId]);
      expect(entry).toEqual({ kind: JOURNAL_ENTRY_KIND.WALLET_REVERSAL, client_id: tenant.clientId });
    });

    it('respects floors: undoing money already spent → FloorBreachError, nothing written', async () => {
      const a = await openLedgerWallet(app, tenant.clientId, { initialBalance: '10' });
      const b = await openLedgerWallet(app, tenant.clientId);
      const c = await openLedgerWallet(app, tenant.clientId);
      const original = await postEntryWithOperation(app, transfer(tenant.clientId, a, b, '10'));
      await postEntryWithOperation(app, transfer(tenant.clientId, b, c, '4'));
      const before = await snapshot(tenant.clientId);

      await expect(reverse(tenant.clientId, original.entryId)).rejects.toBeInstanceOf(FloorBreachError);
      expect(await snapshot(tenant.clientId)).toEqual(before);
    });

    it("another client's entry, or no entry at all → UnknownLedgerEntryError, nothing written", async () => {
      const a = await openLedgerWallet(app, other.clientId, { initialBalance: '5' });
      const b = await openLedgerWallet(app, other.clientId);
      const foreign = await postEntryWithOperation(app, transfer(other.clientId, a, b, '5'));
      const before = [await snapshot(tenant.clientId), await snapshot(other.clientId)];

      await expect(reverse(tenant.clientId, foreign.entryId)).rejects.toBeInstanceOf(UnknownLedgerEntryError);
      await expect(reverse(tenant.clientId, '999999999999')).rejects.toBeInstanceOf(UnknownLedgerEntryError);
      expect([await snapshot(tenant.clientId), await snapshot(other.clientId)]).toEqual(before);
    });
  });

  describe('the invariant queries detect violations', () => {
    it('an entry without a business record is reported by (d) — inside a transaction that is rolled back', async () => {
      const t = await createTenant(app);
      const a = await openLedgerWallet(app, t.clientId, { initialBalance: '5' });
      const b = await openLedgerWallet(app, t.clientId);
      await db
        .transaction(async (manager) => {
          const posted = await ledgerPostEntry(manager, transfer(t.clientId, a, b, '1'));
          const results = await verifyLedger(manager);
          const d = results.find((r) => r.name === 'd_one_entry_per_business_record')!;
          expect(d.violations.map((v) => String(v.entry_id))).toContain(posted.entryId);
          await recordFundingOperation(manager, t.clientId, posted.entryId);
          const fixed = (await verifyLedger(manager)).find((r) => r.name === 'd_one_entry_per_business_record')!;
          expect(fixed.violations.map((v) => String(v.entry_id))).not.toContain(posted.entryId);
          // A stored balance that disagrees with the postings is reported by (b).
          await manager.query('UPDATE ledger_accounts SET balance = balance + 1 WHERE id = $1', [b.id]);
          const b2 = (await verifyLedger(manager)).find((r) => r.name === 'b_balances_match_postings')!;
          expect(b2.violations.map((v) => v.account_number)).toContain(b.accountNumber);
          throw new Error('roll back');
        })
        .catch((error: Error) => expect(error.message).toBe('roll back'));
      expect(await balanceOf(app, b.id)).toBe('0.0000');
    });

    it("a gap or a number twice in an account's postings is reported by (e) — inside a transaction that is rolled back", async () => {
      const t = await createTenant(app);
      const a = await openLedgerWallet(app, t.clientId, { initialBalance: '5' }); // its posting 1, committed
      const b = await openLedgerWallet(app, t.clientId);
      const numbered = async (manager: EntityManager) =>
        (await verifyLedger(manager)).find((r) => r.name === 'e_postings_numbered_per_account')!.violations.map((v) => v.account_number);
      const renumber = (manager: EntityManager, from: number, to: number) =>
        manager.query(`UPDATE postings SET account_seq = $4 WHERE client_id = $1 AND account_id = $2 AND account_seq = $3`, [
          t.clientId,
          a.id,
          from,
          to,
        ]);
      await db
        .transaction(async (manager) => {
          const posted = await ledgerPostEntry(manager, transfer(t.clientId, a, b, '1')); // a's posting 2
          await recordFundingOperation(manager, t.clientId, posted.entryId);
          expect(await numbered(manager)).not.toContain(a.accountNumber);
          await renumber(manager, 2, 3); // 1, 3 of 2
          expect(await numbered(manager)).toContain(a.accountNumber);
          await renumber(manager, 3, 1); // 1 twice
          expect(await numbered(manager)).toContain(a.accountNumber);
          throw new Error('roll back');
        })
        .catch((error: Error) => expect(error.message).toBe('roll back'));
      expect(await numbered(db.manager)).not.toContain(a.accountNumber);
    });
  });
});
