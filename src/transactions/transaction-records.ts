import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { formatAmount } from '../common/money';
import { UUID } from '../common/validation/validators';

export type TransactionSource =
  | 'EXTERNAL_CREDIT'
  | 'EXTERNAL_DEBIT'
  | 'INTERNAL_TRANSFER_DEBIT'
  | 'INTERNAL_TRANSFER_CREDIT'
  | 'INTERNAL_REVERAL_DEBIT'
  | 'INTERNAL_REVERAL_CREDIT';

/**
 * A wallet transaction record as SQL function wallet_transaction_rows shapes it
 * (src/transactions/sql/wallet_transaction_rows.sql), read as a row or inside a money function's jsonb answer.
 */
export interface TransactionRow {
  id: string;
  operation_id: string;
  operation_kind: string;
  account_id: string;
  account_number: string;
  account_kind: string;
  client_service_code: string | null;
  transaction_type: 'CREDIT' | 'DEBIT';
  transaction_source: TransactionSource;
  currency: string;
  transaction_amount: string;
  transaction_fee: string;
  previous_balance: string;
  current_balance: string;
  other_party_account: string | null;
  other_party_transaction_hash: string | null;
  source_transaction_id: string | null;
  source_transaction_data: unknown;
  transaction_narration: string | null;
  /** A Date read as a column; ISO 8601 text inside a jsonb answer. */
  transaction_date: Date | string;
  original_currency: string | null;
  original_amount: string | null;
  exchange_rate: string | null;
}

/** A page of a wallet's records in booking order, each with the keyset position after it. */
export interface AccountPage {
  clientId: string;
  accountId: string;
  /** Booking time bounds, inclusive from, exclusive until. */
  from: Date | null;
  until: Date | null;
  /** The position the page starts after: created_at as Postgres' UTC text with microseconds, and the record's id. */
  after: { createdAt: string; id: string } | null;
  limit: number;
}

/**
 * SQL function wallet_transaction_rows (src/transactions/sql/wallet_transaction_rows.sql): the records it shapes,
 * chosen by id or by wallet and booking time. The money functions answer theirs through wallet_operation_rows.
 */
@Injectable()
export class TransactionRecords {
  async byId(manager: EntityManager, clientId: string, transactionId: string): Promise<TransactionRow | null> {
    if (!UUID.test(transactionId)) return null;
    const [row] = await manager.query(`SELECT r.* FROM wallet_transaction_rows($1, ARRAY[$2::uuid]) r`, [clientId, transactionId]);
    return row ?? null;
  }

  /**
   * The cursor carries created_at with Postgres' microseconds: a JS Date would cut it to milliseconds, and the last
   * row of a page would then sort after its own cursor and come back on the next page.
   */
  async ofAccount(manager: EntityManager, page: AccountPage): Promise<Array<TransactionRow & { cursor_at: string }>> {
    // The page's ids first, then their records: on Citus a function reading shards may not run inside a query on one.
    const ids: Array<{ id: string; cursor_at: string }> = await manager.query(
      `SELECT t.id, to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
       FROM wallet_transactions t
       WHERE t.client_id = $7 AND t.account_id = $1
         AND ($2::timestamptz IS NULL OR t.created_at >= $2)
         AND ($3::timestamptz IS NULL OR t.created_at < $3)
         AND ($4::timestamptz IS NULL OR (t.created_at, t.id) > ($4::timestamptz, $5::uuid))
       ORDER BY t.created_at, t.id
       LIMIT $6`,
      [page.accountId, page.from, page.until, page.after?.createdAt ?? null, page.after?.id ?? null, page.limit, page.clientId],
    );
    if (ids.length === 0) return [];
    const rows: TransactionRow[] = await manager.query(`SELECT r.* FROM wallet_transaction_rows($1, $2::uuid[]) r`, [
      page.clientId,
      ids.map((r) => r.id),
    ]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map(({ id, cursor_at }) => ({ ...byId.get(id)!, cursor_at }));
  }
}

/** The transaction record of the wallet document, plus fee and conversion details. */
export function transactionRecord(row: TransactionRow) {
  return {
    transaction_id: row.id,
    account: row.account_number,
    client_service: row.client_service_code,
    transaction_type: row.transaction_type,
    transaction_source: row.transaction_source,
    currency: row.currency,
    transaction_amount: formatAmount(row.transaction_amount),
    transaction_fee: formatAmount(row.transaction_fee),
    previous_balance: formatAmount(row.previous_balance),
    current_balance: formatAmount(row.current_balance),
    other_party_account: row.other_party_account,
    other_party_transaction_hash: row.other_party_transaction_hash,
    source_transaction_id: row.source_transaction_id,
    source_transaction_data: row.source_transaction_data,
    transaction_narration: row.transaction_narration,
    transaction_date: new Date(row.transaction_date).toISOString(),
    original_currency: row.original_currency,
    original_amount: row.original_amount === null ? null : formatAmount(row.original_amount),
    exchange_rate: row.exchange_rate,
  };
}

/** Transfers and reversals answer with both sides. */
export function pairRecord(rows: TransactionRow[]) {
  const debit = rows.find((r) => r.transaction_type === 'DEBIT')!;
  const credit = rows.find((r) => r.transaction_type === 'CREDIT')!;
  return {
    source_transaction: transactionRecord(debit),
    destination_transaction: transactionRecord(credit),
  };
}
