import { UUID } from '../common/validation/validators';
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
  accountNumber: string;
  accountKind: string;
  clientServiceId: string | null;
  clientServiceCode: string | null;
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

/** The business record that owns a wallet journal entry; its reference is the merchant's idempotency key. */
export interface OperationToRecord {
  clientId: string;
  kind: string;
  sourceTransactionId: string | null;
  fingerprint: string | null;
  entryId: string;
}

/** Column of wallet_transactions and the SQL type its parameter is cast to. */
const LEG_COLUMNS: Array<[string, string, (leg: Leg) => unknown]> = [
  ['id', 'uuid', (l) => l.id],
  ['account_id', 'uuid', (l) => l.accountId],
  ['client_service_id', 'uuid', (l) => l.clientServiceId],
  ['transaction_type', 'varchar', (l) => l.type],
  ['transaction_source', 'varchar', (l) => l.source],
  ['currency', 'char(3)', (l) => l.currency],
  ['transaction_amount', 'numeric', (l) => l.amount.toFixed()],
  ['transaction_fee', 'numeric', (l) => l.fee.toFixed()],
  ['previous_balance', 'numeric', (l) => l.movement.balanceBefore.toFixed()],
  ['current_balance', 'numeric', (l) => l.movement.balanceAfter.toFixed()],
  ['other_party_account', 'varchar', (l) => l.otherPartyAccount],
  ['other_party_transaction_hash', 'varchar', (l) => l.otherPartyTransactionHash],
  ['source_transaction_id', 'varchar', (l) => l.sourceTransactionId],
  ['source_transaction_data', 'jsonb', (l) => (l.sourceTransactionData === undefined ? null : JSON.stringify(l.sourceTransactionData))],
  ['transaction_narration', 'varchar', (l) => l.narration],
  ['transaction_date', 'timestamptz', (l) => l.transactionDate],
  ['original_currency', 'char(3)', (l) => l.original?.currency ?? null],
  ['original_amount', 'numeric', (l) => l.original?.amount.toFixed() ?? null],
  ['exchange_rate', 'numeric', (l) => l.original?.exchangeRate.toFixed() ?? null],
];

/** Reads and writes the per-account transaction records of wallet operations. */
@Injectable()
export class TransactionRecords {
  /**
   * Records the operation and its legs in one statement (one round trip while the ledger rows are locked).
   * Returns null when another request with the same reference committed first: the unique index makes a
   * concurrent duplicate wait for it, then insert nothing.
   */
  async recordOperation(manager: EntityManager, op: OperationToRecord, legs: Leg[]): Promise<TransactionRow[] | null> {
    const values: unknown[] = [op.clientId, op.kind, op.sourceTransactionId, op.fingerprint, op.entryId];
    const rows = legs.map((leg) => {
      const params = LEG_COLUMNS.map(([, type, read]) => {
        values.push(read(leg));
        return `$${values.length}::${type}`;
      });
      return `(${params.join(', ')})`;
    });
    const names = LEG_COLUMNS.map(([name]) => name);
    const inserted: Array<{ operation_id: string }> = await manager.query(
      `WITH op AS (
         INSERT INTO wallet_operations (client_id, kind, source_transaction_id, request_fingerprint, entry_id)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (client_id, source_transaction_id) WHERE source_transaction_id IS NOT NULL DO NOTHING
         RETURNING id
       )
       INSERT INTO wallet_transactions (operation_id, client_id, ${names.join(', ')})
       SELECT op.id, $1, leg.* FROM op CROSS JOIN (VALUES ${rows.join(', ')}) AS leg(${names.join(', ')})
       RETURNING operation_id`,
      values,
    );
    if (inserted.length === 0) return null;
    const operationId = inserted[0].operation_id;
    return legs.map((leg) => rowOf(leg, operationId, op.kind));
  }

  /** The records of an operation, debit leg first. */
  async ofOperation(manager: EntityManager, operationId: string): Promise<TransactionRow[]> {
    return manager.query(`${SELECT_TRANSACTIONS} WHERE t.operation_id = $1 ORDER BY t.transaction_type = 'CREDIT', t.id`, [operationId]);
  }

  async byId(manager: EntityManager, clientId: string, transactionId: string): Promise<TransactionRow | null> {
    if (!UUID.test(transactionId)) return null;
    const [row] = await manager.query(`${SELECT_TRANSACTIONS} WHERE t.client_id = $1 AND t.id = $2`, [clientId, transactionId]);
    return row ?? null;
  }
}

/** A just-written leg as the record reader would return it, so the answer needs no second query. */
function rowOf(leg: Leg, operationId: string, operationKind: string): TransactionRow {
  return {
    id: leg.id,
    operation_id: operationId,
    operation_kind: operationKind,
    account_id: leg.accountId,
    account_number: leg.accountNumber,
    account_kind: leg.accountKind,
    client_service_code: leg.clientServiceCode,
    transaction_type: leg.type,
    transaction_source: leg.source,
    currency: leg.currency,
    transaction_amount: leg.amount.toFixed(),
    transaction_fee: leg.fee.toFixed(),
    previous_balance: leg.movement.balanceBefore.toFixed(),
    current_balance: leg.movement.balanceAfter.toFixed(),
    other_party_account: leg.otherPartyAccount,
    other_party_transaction_hash: leg.otherPartyTransactionHash,
    source_transaction_id: leg.sourceTransactionId,
    source_transaction_data: leg.sourceTransactionData ?? null,
    transaction_narration: leg.narration,
    transaction_date: leg.transactionDate,
    original_currency: leg.original?.currency ?? null,
    original_amount: leg.original?.amount.toFixed() ?? null,
    exchange_rate: leg.original ? leg.original.exchangeRate.toFixed(8) : null,
  };
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
