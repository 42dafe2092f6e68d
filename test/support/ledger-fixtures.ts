import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { EntityManager } from 'typeorm';
import { Money } from '../../src/common/money';
import { JOURNAL_ENTRY_KIND } from '../../src/ledger/journal-entry-kind';
import { LedgerAccount } from '../../src/ledger/ledger-account';
import { EntryToPost, LedgerService, PostedEntry, type SystemAccountRef } from '../../src/ledger/ledger.service';
import { dataSource } from './test-app';

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
    const posted = await app.get(LedgerService).postEntry(manager, entry);
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
      const posted = await ledger.postEntry(manager, {
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
  return app.get(LedgerService).systemAccount(dataSource(app).manager, clientId, 'SETTLEMENT', currency);
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
