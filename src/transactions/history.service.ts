import { UUID } from '../common/validation/validators';
import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { parseOptionalPeriod } from '../common/period';
import { ReadReplica } from '../infra/database/read-replica';
import { TransactionRecords, transactionRecord } from './transaction-records';

export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;

export interface HistoryQuery {
  start_date?: string;
  end_date?: string;
  limit?: string;
  cursor?: string;
}

/**
 * A wallet's transactions in booking order, for reconciliation. Keyset pagination on (created_at, id): pages
 * stay consistent while new transactions arrive, and deep pages cost the same as the first. The history reads the
 * replica; one transaction (`one`) is a status query and reads the primary, so a client sees its own write at once.
 */
@Injectable()
export class HistoryService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly records: TransactionRecords,
    private readonly replica: ReadReplica,
  ) {}

  ofWallet(principal: WalletPrincipal, accountNumber: string, query: HistoryQuery) {
    return this.replica.read((db) => this.ofWalletOn(db, principal, accountNumber, query));
  }

  private async ofWalletOn(db: DataSource, principal: WalletPrincipal, accountNumber: string, query: HistoryQuery) {
    const [account] = await db.query(`SELECT id FROM ledger_accounts WHERE client_id = $1 AND account_number = $2 AND kind = 'WALLET'`, [
      principal.clientId,
      accountNumber,
    ]);
    if (!account) throw new NotFoundException('Wallet not found');
    const { from, until } = parseOptionalPeriod(query.start_date, query.end_date);
    const limit = query.limit === undefined ? HISTORY_DEFAULT_LIMIT : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT) {
      throw new BadRequestException([`limit must be an integer from 1 to ${HISTORY_MAX_LIMIT}`]);
    }
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    const rows = await this.records.ofAccount(db.manager, {
      clientId: principal.clientId,
      accountId: account.id,
      from,
      until,
      after,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      records: page.map(transactionRecord),
      next_cursor: rows.length > limit && last ? encodeCursor(last.cursor_at, last.id) : null,
    };
  }

  async one(principal: WalletPrincipal, transactionId: string) {
    const row = await this.records.byId(this.db.manager, principal.clientId, transactionId);
    if (!row) throw new NotFoundException('Transaction not found');
    return transactionRecord(row);
  }
}

/** createdAt is the UTC timestamp with microseconds, as Postgres stores it: "2024-01-01T12:00:00.123456Z". */
function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(`${createdAt}|${id}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  const [createdAt, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const timestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
  if (!createdAt || !id || !timestamp.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || !UUID.test(id)) {
    throw new BadRequestException(['cursor is invalid']);
  }
  return { createdAt, id };
}
