import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import type { JournalEntryKind } from './journal-entry-kind';
import { LedgerAccount, SystemAccountKind } from './ledger-account';
import { FloorBreachError, UnbalancedEntryError, UnknownLedgerAccountError, UnknownLedgerEntryError } from './ledger.errors';

export interface PostingLine {
  accountId: string;
  /** Positive raises the account's balance, negative lowers it. */
  amount: Money;
}

export interface EntryToPost {
  clientId: string;
  /** What kind of business record the entry belongs to. */
  kind: JournalEntryKind;
  lines: PostingLine[];
}

export interface AccountMovement {
  amount: Money;
  balanceBefore: Money;
  balanceAfter: Money;
}

export interface PostedEntry {
  entryId: string;
  movements: Map<string, AccountMovement>;
}

/** Which system account to post to; balances are read from the ledger, never from this reference. */
export type SystemAccountRef = Pick<LedgerAccount, 'id' | 'accountNumber' | 'kind' | 'currency'>;

const REVERSE_ENTRY: PreparedStatement = {
  name: 'ledger_reverse_entry',
  text: 'SELECT * FROM ledger_reverse_entry(p_client_id => $1, p_entry_id => $2, p_kind => $3)',
};

const SYSTEM_ACCOUNT_COLUMNS = `id, account_number AS "accountNumber", kind, currency`;

const ACCOUNT_COLUMNS = `id, client_id AS "clientId", account_number AS "accountNumber", kind, currency, balance,
  minimum_balance AS "minimumBalance", can_overdraw AS "canOverdraw"`;

/**
 * The ledger's TypeScript side: the one wrapper of SQL functions ledger_post_entry (postEntry), ledger_reverse_entry
 * (reverseEntry) and ledger_system_account (systemAccount), in src/ledger/sql/, which alone write postings and
 * balances. Each runs in the caller's transaction, so an entry commits or rolls back with its business record; the
 * one-call SQL of the money paths calls the same functions from the database.
 */
@Injectable()
export class LedgerService {
  /** System accounts are created once and never removed, so committed ones can be remembered (not their balance). */
  private readonly systemAccounts = new Map<string, SystemAccountRef>();

  /** SQL function ledger_post_entry (src/ledger/sql/ledger_post_entry.sql). */
  async postEntry(manager: EntityManager, entry: EntryToPost): Promise<PostedEntry> {
    assertTwoAccounts(entry.lines);
    let rows: PostingRow[];
    try {
      rows = await manager.query(
        'SELECT * FROM ledger_post_entry(p_client_id => $1, p_kind => $2, p_accounts => $3::uuid[], p_amounts => $4::numeric[])',
        [entry.clientId, entry.kind, entry.lines.map((l) => l.accountId), entry.lines.map((l) => l.amount.toFixed())],
      );
    } catch (error) {
      throw ledgerError(error);
    }
    return postedEntry(rows);
  }

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

  /**
   * SQL function ledger_system_account (src/ledger/sql/ledger_system_account.sql), the one creator of system accounts:
   * the client's account of a kind and currency, created on first use. System accounts may go negative: SETTLEMENT
   * mirrors money that entered or left through the outside world.
   */
  async systemAccount(manager: EntityManager, clientId: string, kind: SystemAccountKind, currency: string): Promise<SystemAccountRef> {
    const key = `${clientId}:${kind}:${currency}`;
    const known = this.systemAccounts.get(key);
    if (known) return known;
    // A row the function creates is not visible to the statement that called it, hence a second statement.
    const [{ id }]: Array<{ id: string }> = await manager.query(
      `SELECT ledger_system_account(p_client_id => $1, p_kind => $2, p_currency => $3) AS id`,
      [clientId, kind, currency],
    );
    const [account]: Array<SystemAccountRef & { writtenHere: boolean }> = await manager.query(
      `SELECT ${SYSTEM_ACCOUNT_COLUMNS}, xmin = xid(pg_current_xact_id_if_assigned()) IS TRUE AS "writtenHere"
       FROM ledger_accounts WHERE id = $1`,
      [id],
    );
    const { writtenHere, ...existing } = account;
    // Perhaps created inside the caller's transaction, which may still roll back: not remembered until seen committed.
    if (writtenHere) return existing;
    this.systemAccounts.set(key, existing);
    return existing;
  }
}

function assertTwoAccounts(lines: PostingLine[]): void {
  // Balance per currency is checked by ledger_post_entry, which knows each account's currency.
  const accounts = new Set(lines.map((l) => l.accountId));
  if (accounts.size < 2 || accounts.size !== lines.length) {
    throw new UnbalancedEntryError('an entry needs one line on each of at least two accounts');
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
