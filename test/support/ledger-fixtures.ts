import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { EntityManager } from 'typeorm';
import { Money } from '../../src/common/money';
import { JOURNAL_ENTRY_KIND, type JournalEntryKind } from '../../src/ledger/journal-entry-kind';
import { LedgerAccount, SystemAccountKind } from '../../src/ledger/ledger-account';
import { ledgerError, LedgerService, PostedEntry } from '../../src/ledger/ledger.service';
import { dataSource } from './test-app';

/** One entry for ledger_post_entry: a line per account, positive raising its balance, negative lowering it. */
export interface EntryToPost {
  clientId: string;
  /** What kind of business record the entry belongs to. */
  kind: JournalEntryKind;
  lines: Array<{ accountId: string; amount: Money }>;
}

/** A system account as ledger_system_account hands it out; its balance is read from the ledger. */
export type SystemAccountRef = Pick<LedgerAccount, 'id' | 'accountNumber' | 'kind' | 'currency'>;

/**
 * SQL function ledger_post_entry (src/ledger/sql/ledger_post_entry.sql), the way the money paths' SQL posts, in the
 * caller's transaction; its refusals as the ledger's error classes, as the services raise them (ledgerError).
 */
export async function ledgerPostEntry(manager: EntityManager, entry: EntryToPost): Promise<PostedEntry> {
  let rows: Array<{ entry_id: string; account_id: string; amount: string; balance_before: string; balance_after: string }>;
  try {
    rows = await manager.query(
      'SELECT * FROM ledger_post_entry(p_client_id => $1, p_kind => $2, p_accounts => $3::uuid[], p_amounts => $4::numeric[])',
      [entry.clientId, entry.kind, entry.lines.map((l) => l.accountId), entry.lines.map((l) => l.amount.toFixed())],
    );
  } catch (error) {
    throw ledgerError(error);
  }
  const movements = rows.map(
    (r) =>
      [
        r.account_id,
        { amount: new Money(r.amount), balanceBefore: new Money(r.balance_before), balanceAfter: new Money(r.balance_after) },
      ] as const,
  );
  return { entryId: String(rows[0].entry_id), movements: new Map(movements) };
}

/**
 * SQL function ledger_system_account (src/ledger/sql/ledger_system_account.sql): the client's system account of a
 * kind and currency, created on first use, in the caller's transaction.
 */
export async function ledgerSystemAccount(
  manager: EntityManager,
  clientId: string,
  kind: SystemAccountKind,
  currency: string,
): Promise<SystemAccountRef> {
  // A row the function creates is not visible to the statement that called it, hence a second statement.
  const [{ id }] = await manager.query('SELECT ledger_system_account(p_client_id => $1, p_kind => $2, p_currency => $3) AS id', [
    clientId,
    kind,
    currency,
  ]);
  const [account] = await manager.query('SELECT id, account_number AS "accountNumber", kind, currency FROM ledger_accounts WHERE id = $1', [
    id,
  ]);
  return account;
}

/**
 * Invariant (d) of the provider contract: every journal entry has exactly one business record. Tests that move
 * money directly through the ledger write a FUNDING wallet operation for each entry, in the same DB transaction.
 */
export async function recordFundingOperation(manager: EntityManager, clientId: string, entryId: string): Promise<void> {
  await manager.query(`INSERT INTO wallet_operations (client_id, kind, entry_id, source_transaction_id) VALUES ($1, 'FUNDING', $2, NULL)`, [
    clientId,
    entryId,
  ]);
}

/** Posts one entry together with its business record; commits both or neither. */
export async function postEntryWithOperation(app: NestFastifyApplication, entry: EntryToPost): Promise<PostedEntry> {
  return dataSource(app).transaction(async (manager) => {
    const posted = await ledgerPostEntry(manager, entry);
    await recordFundingOperation(manager, entry.clientId, posted.entryId);
    return posted;
  });
}

/**
 * Opens a bare ledger wallet account (no merchant-facing wallet row): enough for ledger-level tests. With
 * `initialBalance` the account is funded from SETTLEMENT in the same DB transaction, so a wallet whose floor is
 * above zero is never committed below it (invariant (c) holds at every commit).
 */
export async function openLedgerWallet(
  app: NestFastifyApplication,
  clientId: string,
  options: { currency?: string; minimumBalance?: string; canOverdraw?: boolean; initialBalance?: string } = {},
): Promise<LedgerAccount> {
  const ledger = app.get(LedgerService);
  const currency = options.currency ?? 'KES';
  const settlement = options.initialBalance ? await settlementAccount(app, clientId, currency) : null;
  return dataSource(app).transaction(async (manager) => {
    const account = await ledger.openWalletAccount(manager, {
      clientId,
      currency,
      minimumBalance: new Money(options.minimumBalance ?? '0'),
      canOverdraw: options.canOverdraw ?? false,
    });
    if (settlement && options.initialBalance) {
      const amount = new Money(options.initialBalance);
      const posted = await ledgerPostEntry(manager, {
        clientId,
        kind: JOURNAL_ENTRY_KIND.WALLET_FUNDING,
        lines: [
          { accountId: settlement.id, amount: amount.neg() },
          { accountId: account.id, amount },
        ],
      });
      await recordFundingOperation(manager, clientId, posted.entryId);
    }
    return account;
  });
}

export async function settlementAccount(app: NestFastifyApplication, clientId: string, currency: string): Promise<SystemAccountRef> {
  return ledgerSystemAccount(dataSource(app).manager, clientId, 'SETTLEMENT', currency);
}

async function accountById(app: NestFastifyApplication, accountId: string): Promise<{ clientId: string; currency: string }> {
  const [row] = await dataSource(app).query('SELECT client_id AS "clientId", currency FROM ledger_accounts WHERE id = $1', [accountId]);
  if (!row) throw new Error(`no ledger account ${accountId}`);
  return row;
}

/** Moves `amount` from the client's SETTLEMENT account (same currency) into the account. */
export async function fundAccount(app: NestFastifyApplication, accountId: string, amount: string): Promise<PostedEntry> {
  const { clientId, currency } = await accountById(app, accountId);
  const settlement = await settlementAccount(app, clientId, currency);
  return postEntryWithOperation(app, {
    clientId,
    kind: JOURNAL_ENTRY_KIND.WALLET_FUNDING,
    lines: [
      { accountId: settlement.id, amount: new Money(amount).neg() },
      { accountId, amount: new Money(amount) },
    ],
  });
}

/** Moves `amount` out of the account back to the client's SETTLEMENT account (same currency). */
export async function drainAccount(app: NestFastifyApplication, accountId: string, amount: string): Promise<PostedEntry> {
  const { clientId, currency } = await accountById(app, accountId);
  const settlement = await settlementAccount(app, clientId, currency);
  return postEntryWithOperation(app, {
    clientId,
    kind: JOURNAL_ENTRY_KIND.WALLET_FUNDING,
    lines: [
      { accountId, amount: new Money(amount).neg() },
      { accountId: settlement.id, amount: new Money(amount) },
    ],
  });
}

/** The stored balance, as the database prints numeric(20,4): "100.0000". */
export async function balanceOf(app: NestFastifyApplication, accountId: string): Promise<string> {
  const [row] = await dataSource(app).query('SELECT balance FROM ledger_accounts WHERE id = $1', [accountId]);
  return row.balance;
}
