import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import type { JournalEntryKind } from './journal-entry-kind';
import { LedgerAccount } from './ledger-account';
import { FloorBreachError, UnbalancedEntryError, UnknownLedgerAccountError, UnknownLedgerEntryError } from './ledger.errors';

export interface AccountMovement {
  amount: Money;
  balanceBefore: Money;
  balanceAfter: Money;
}

export interface PostedEntry {
  entryId: string;
  movements: Map<string, AccountMovement>;
}

const REVERSE_ENTRY: PreparedStatement = {
  name: 'ledger_reverse_entry',
  text: 'SELECT * FROM ledger_reverse_entry(p_client_id => $1, p_entry_id => $2, p_kind => $3)',
};

const ACCOUNT_COLUMNS = `id, client_id AS "clientId", account_number AS "accountNumber", kind, currency, balance,
  minimum_balance AS "minimumBalance", can_overdraw AS "canOverdraw"`;

/**
 * The ledger's TypeScript side. Postings and balances are written only by the SQL functions in src/ledger/sql/
 * (ledger_post_entries, ledger_post_entry, ledger_reverse_entry; system accounts by ledger_system_account), which the
 * one-call SQL of the money paths calls from the database; here, ledger_reverse_entry for the services that undo an
 * entry, and wallet accounts. Each runs in the caller's transaction, so an entry commits or rolls back with its
 * business record.
 */
@Injectable()
export class LedgerService {
  /**
   * SQL function ledger_reverse_entry (src/ledger/sql/ledger_reverse_entry.sql): posts the exact negation of one of
   * the client's entries, as a new entry of `kind`, the only way anything is undone (wallet reversals, collection
   * reversals and their compensations). Floors apply as to any entry.
   */
  async reverseEntry(manager: EntityManager, clientId: string, entryId: string, kind: JournalEntryKind): Promise<PostedEntry> {
    try {
      return postedEntry(await runPrepared<PostingRow>(manager, REVERSE_ENTRY, [clientId, entryId, kind]));
    } catch (error) {
      throw ledgerError(error);
    }
  }

  /**
   * Whether the entry's postings are in the ledger: false once partitions:archive has detached their month, after
   * which reverseEntry cannot undo the entry.
   */
  async hasPostings(manager: EntityManager, entryId: string): Promise<boolean> {
    const [row] = await manager.query('SELECT EXISTS (SELECT 1 FROM postings WHERE entry_id = $1) AS booked', [entryId]);
    return row.booked;
  }

  async openWalletAccount(
    manager: EntityManager,
    account: { clientId: string; currency: string; minimumBalance: Money; canOverdraw: boolean },
  ): Promise<LedgerAccount> {
    const [row] = await manager.query(
      `INSERT INTO ledger_accounts (client_id, kind, currency, minimum_balance, can_overdraw)
       VALUES ($1, 'WALLET', $2, $3, $4) RETURNING ${ACCOUNT_COLUMNS}`,
      [account.clientId, account.currency, account.minimumBalance.toFixed(), account.canOverdraw],
    );
    return row;
  }
}

/** One row per account of a posted entry, as ledger_post_entry and ledger_reverse_entry answer. */
interface PostingRow {
  entry_id: string;
  account_id: string;
  amount: string;
  balance_before: string;
  balance_after: string;
}

function postedEntry(rows: PostingRow[]): PostedEntry {
  const movements = new Map<string, AccountMovement>();
  for (const row of rows) {
    movements.set(row.account_id, {
      amount: new Money(row.amount),
      balanceBefore: new Money(row.balance_before),
      balanceAfter: new Money(row.balance_after),
    });
  }
  return { entryId: String(rows[0].entry_id), movements };
}

/** The ledger's SQL errors (LF001, LB001, LA001, LE001) as its error classes; any other error as it is. */
export function ledgerError(error: unknown): unknown {
  const e = error as { code?: string; detail?: string; driverError?: { code?: string; detail?: string }; message?: string };
  const code = e.code ?? e.driverError?.code;
  if (code === 'LF001') return new FloorBreachError(e.detail ?? e.driverError?.detail ?? '');
  if (code === 'LB001') return new UnbalancedEntryError(e.message ?? 'unbalanced entry');
  if (code === 'LA001') return new UnknownLedgerAccountError(e.message ?? 'unknown account');
  if (code === 'LE001') return new UnknownLedgerEntryError(e.message ?? 'unknown entry');
  return error;
}
