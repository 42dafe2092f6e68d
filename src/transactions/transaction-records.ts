import { UUID } from '../common/validation/validators';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { formatAmount } from '../common/money';

export type TransactionSource =
  | 'EXTERNAL_CREDIT'
  | 'EXTERNAL_DEBIT'
  | 'INTERNAL_TRANSFER_DEBIT'
  | 'INTERNAL_TRANSFER_CREDIT'
  | 'INTERNAL_REVERAL_DEBIT'
  | 'INTERNAL_REVERAL_CREDIT';

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
  transaction_date: Date;
  original_currency: string | null;
  original_amount: string | null;
  exchange_rate: string | null;
}

export const SELECT_TRANSACTIONS = `
  SELECT t.*, o.kind AS operation_kind, a.account_number, a.kind AS account_kind, s.code AS client_service_code
  FROM wallet_transactions t
  JOIN wallet_operations o ON o.id = t.operation_id
  JOIN ledger_accounts a ON a.id = t.account_id
  LEFT JOIN client_services s ON s.id = t.client_service_id`;

/** Reads the per-account transaction records of wallet operations (SQL functions write them). */
@Injectable()
export class TransactionRecords {
  async byId(manager: EntityManager, clientId: string, transactionId: string): Promise<TransactionRow | null> {
    if (!UUID.test(transactionId)) return null;
    const [row] = await manager.query(`${SELECT_TRANSACTIONS} WHERE t.client_id = $1 AND t.id = $2`, [clientId, transactionId]);
    return row ?? null;
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
