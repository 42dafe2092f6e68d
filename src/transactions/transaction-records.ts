import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { EntityManager } from 'typeorm';
import { formatAmount } from '../common/money';
import { AccountMovement } from '../ledger/ledger.service';

export type TransactionSource =
  | 'EXTERNAL_CREDIT'
  | 'EXTERNAL_DEBIT'
  | 'INTERNAL_TRANSFER_DEBIT'
  | 'INTERNAL_TRANSFER_CREDIT'
  | 'INTERNAL_REVERAL_DEBIT'
  | 'INTERNAL_REVERAL_CREDIT';

/** One account's side of an operation, as the merchant sees it. */
export interface Leg {
  id: string;
  accountId: string;
  clientServiceId: string | null;
  type: 'CREDIT' | 'DEBIT';
  source: TransactionSource;
  currency: string;
  amount: Decimal;
  fee: Decimal;
  movement: AccountMovement;
  otherPartyAccount: string | null;
  otherPartyTransactionHash: string | null;
  sourceTransactionId: string | null;
  sourceTransactionData: unknown;
  narration: string | null;
  transactionDate: Date;
  original: { currency: string; amount: Decimal; exchangeRate: Decimal } | null;
}

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

/** Reads and writes the per-account transaction records of wallet operations. */
@Injectable()
export class TransactionRecords {
  async insert(manager: EntityManager, operationId: string, clientId: string, legs: Leg[]): Promise<void> {
    const columns = 21;
    const values: unknown[] = [];
    const tuples = legs.map((leg, i) => {
      values.push(
        leg.id, operationId, clientId, leg.accountId, leg.clientServiceId, leg.type, leg.source, leg.currency,
        leg.amount.toFixed(), leg.fee.toFixed(), leg.movement.balanceBefore.toFixed(), leg.movement.balanceAfter.toFixed(),
        leg.otherPartyAccount, leg.otherPartyTransactionHash, leg.sourceTransactionId,
        leg.sourceTransactionData === undefined ? null : JSON.stringify(leg.sourceTransactionData),
        leg.narration, leg.transactionDate, leg.original?.currency ?? null, leg.original?.amount.toFixed() ?? null,
        leg.original?.exchangeRate.toFixed() ?? null,
      );
      return `(${Array.from({ length: columns }, (_, c) => `$${i * columns + c + 1}`).join(', ')})`;
    });
    await manager.query(
      `INSERT INTO wallet_transactions (id, operation_id, client_id, account_id, client_service_id, transaction_type,
         transaction_source, currency, transaction_amount, transaction_fee, previous_balance, current_balance,
         other_party_account, other_party_transaction_hash, source_transaction_id, source_transaction_data,
         transaction_narration, transaction_date, original_currency, original_amount, exchange_rate)
       VALUES ${tuples.join(', ')}`,
      values,
    );
  }

  /** The records of an operation, debit leg first. */
  async ofOperation(manager: EntityManager, operationId: string): Promise<TransactionRow[]> {
    return manager.query(`${SELECT_TRANSACTIONS} WHERE t.operation_id = $1 ORDER BY t.transaction_type = 'CREDIT', t.id`, [operationId]);
  }

  async byId(manager: EntityManager, clientId: string, transactionId: string): Promise<TransactionRow | null> {
    if (!/^[0-9a-f-]{36}$/i.test(transactionId)) return null;
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

export type TransactionRecord = ReturnType<typeof transactionRecord>;

/** Transfers and reversals answer with both sides. */
export function pairRecord(rows: TransactionRow[]) {
  const debit = rows.find((r) => r.transaction_type === 'DEBIT')!;
  const credit = rows.find((r) => r.transaction_type === 'CREDIT')!;
  return { source_transaction: transactionRecord(debit), destination_transaction: transactionRecord(credit) };
}
