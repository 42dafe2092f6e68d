import { BadRequestException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { PassThrough, Readable } from 'node:stream';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { WalletPrincipal } from '../auth/principal';
import { Money } from '../common/money';
import { writePdfStatement } from './pdf-statement.writer';
import type { StatementQueryDto } from './statement-query.dto';
import { displayDate, DocType, STATEMENT_CONTENT_TYPES, StatementHeader, StatementRow, StatementRows } from './statement.types';
import { StatementAborted } from './stream-flow';
import { writeXlsxStatement } from './xlsx-statement.writer';

/** Rows fetched from the cursor per round trip: large enough to amortise it, small enough to keep memory flat. */
export const STATEMENT_BATCH_SIZE = 1000;
const CURSOR = 'statement_rows';

const WALLET_SQL = `
  SELECT a.id, a.account_number, a.currency, w.account_name, p.profile_name, c.name AS client_name
  FROM ledger_accounts a
  JOIN wallets w ON w.id = a.id
  JOIN profiles p ON p.id = w.profile_id
  JOIN clients c ON c.id = a.client_id
  WHERE a.client_id = $1 AND a.account_number = $2 AND a.kind = 'WALLET'`;

/**
 * The period as a contiguous run of the wallet's postings: from the first posting booked at or after the start to
 * the last one booked before the end. Postings are numbered in the order they were applied to the account (the
 * ledger locks the account row to post), so the rows between the two are exactly the movements from the opening
 * to the closing balance, even where booking times of concurrent entries interleave at the period's edges.
 */
const PERIOD_SQL = `
  SELECT min(id) AS first_id, max(id) AS last_id
  FROM postings WHERE account_id = $1 AND created_at >= $2 AND created_at < $3`;

const OPENING_SQL = `
  SELECT balance_after FROM postings WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT 1`;

/**
 * One row per wallet posting. The entry's business record is the wallet operation that owns it
 * (wallet_operations.entry_id); that operation's transaction record for this account gives the merchant-facing
 * id, narration and source. Postings of entries that have no wallet transaction record still appear.
 */
const ROWS_SQL = `
  SELECT p.created_at AS booked_at, p.amount, p.balance_after, p.entry_id, e.kind AS entry_kind,
         t.id AS transaction_id, t.transaction_narration, t.transaction_source
  FROM postings p
  JOIN journal_entries e ON e.id = p.entry_id
  LEFT JOIN LATERAL (
    SELECT t.id, t.transaction_narration, t.transaction_source
    FROM wallet_operations o
    JOIN wallet_transactions t ON t.operation_id = o.id AND t.account_id = p.account_id
    WHERE o.entry_id = p.entry_id
    ORDER BY t.id
    LIMIT 1
  ) t ON true
  WHERE p.account_id = $1 AND p.id BETWEEN $2 AND $3
  ORDER BY p.id`;

interface RawRow {
  booked_at: Date;
  amount: string;
  balance_after: string;
  entry_id: string;
  entry_kind: string;
  transaction_id: string | null;
  transaction_narration: string | null;
  transaction_source: string | null;
}

export interface Period {
  from: Date;
  /** Inclusive end as shown on the statement. */
  to: Date;
  /** Exclusive bound used in queries. */
  until: Date;
}

/** A statement whose rows are ready to be read from an open cursor on a dedicated connection. */
export interface OpenStatement {
  header: StatementHeader;
  rows: StatementRows;
  fileName: string;
  contentType: string;
  /** Ends the read-only transaction and gives the connection back (destroying it when it is broken). */
  close(): Promise<void>;
}

@Injectable()
export class StatementsService {
  private readonly logger = new Logger(StatementsService.name);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Validates the request and opens the statement: everything that can answer 400 or 404 happens here, before a
   * byte of the document is sent. The whole statement reads one REPEATABLE READ snapshot, so its opening balance,
   * rows and closing balance agree even while money keeps moving.
   */
  async open(principal: WalletPrincipal, query: StatementQueryDto, docType: DocType = query.doc_type): Promise<OpenStatement> {
    const period = parsePeriod(query.start_date, query.end_date);
    const client = await this.pool().connect();
    const onError = (error: Error) => this.logger.warn(`statement connection error: ${error.message}`);
    client.on('error', onError);
    let released = false;
    const close = async () => {
      if (released) return;
      released = true;
      let broken: Error | undefined;
      try {
        await client.query('ROLLBACK'); // read-only: nothing to keep; also closes the cursor
      } catch (rollbackError) {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      }
      client.off('error', onError);
      // A connection that cannot even roll back is destroyed, never handed back to the pool.
      client.release(broken);
    };

    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const { rows: wallets } = await client.query(WALLET_SQL, [principal.clientId, query.account_number]);
      const wallet = wallets[0];
      if (!wallet) throw new NotFoundException('Wallet not found');
      const { rows: bounds } = await client.query(PERIOD_SQL, [wallet.id, period.from, period.until]);
      const { first_id: firstId, last_id: lastId } = bounds[0];
      if (firstId === null) throw new BadRequestException('No transactions in the period');
      const { rows: before } = await client.query(OPENING_SQL, [wallet.id, firstId]);
      await client.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${ROWS_SQL}`, [wallet.id, firstId, lastId]);

      const header: StatementHeader = {
        accountNumber: wallet.account_number,
        accountName: wallet.account_name,
        currency: wallet.currency,
        ownerName: wallet.profile_name,
        clientName: wallet.client_name,
        from: period.from,
        to: period.to,
        openingBalance: new Money(before[0]?.balance_after ?? 0).toFixed(4),
        generatedAt: new Date(),
      };
      let done = false;
      const rows: StatementRows = {
        next: async () => {
          if (done) return [];
          const { rows: raw } = await client.query<RawRow>(`FETCH ${STATEMENT_BATCH_SIZE} FROM ${CURSOR}`);
          if (raw.length < STATEMENT_BATCH_SIZE) done = true;
          return raw.map(toStatementRow);
        },
      };
      const { contentType, extension } = STATEMENT_CONTENT_TYPES[docType];
      return {
        header,
        rows,
        contentType,
        fileName: `statement-${wallet.account_number}-${displayDate(period.from)}-${displayDate(period.to)}.${extension}`,
        close,
      };
    } catch (error) {
      await close();
      throw error;
    }
  }

  /**
   * Starts writing the document into a stream and returns it at once; the connection is given back when the
   * document is complete, fails, or its reader goes away. A failure after the first byte can only cut the
   * download short (the status line is gone), so it is logged and the stream destroyed.
   */
  stream(statement: OpenStatement, docType: DocType): Readable {
    const out = new PassThrough();
    const write = docType === 'PDF' ? writePdfStatement : writeXlsxStatement;
    write(statement.header, statement.rows, out)
      .then(() => statement.close())
      .catch(async (error) => {
        await statement.close();
        if (error instanceof StatementAborted) {
          this.logger.debug?.(`statement ${statement.fileName} aborted by the reader`);
        } else {
          this.logger.error(
            `statement ${statement.fileName} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
          );
        }
        out.destroy(error instanceof StatementAborted ? undefined : error);
      });
    return out;
  }

  private pool(): Pool {
    return (this.db.driver as unknown as { master: Pool }).master;
  }
}

function toStatementRow(raw: RawRow): StatementRow {
  return {
    bookedAt: raw.booked_at,
    transactionId: raw.transaction_id,
    narration: raw.transaction_id ? (raw.transaction_narration ?? '') : `Ledger entry ${raw.entry_id} (${raw.entry_kind})`,
    source: raw.transaction_source ?? '',
    amount: raw.amount,
    balanceAfter: raw.balance_after,
  };
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const HAS_ZONE = /(Z|[+-]\d{2}(:?\d{2})?)$/i;

/**
 * start_date and end_date are ISO 8601 dates or date-times, both inclusive; a date-time without an offset is UTC.
 * A bare end date includes that whole day.
 */
export function parsePeriod(start: string, end: string): Period {
  const from = instant('start_date', start);
  const endsAt = instant('end_date', end);
  const until = DATE_ONLY.test(end) ? new Date(endsAt.getTime() + 86_400_000) : new Date(endsAt.getTime() + 1);
  const to = new Date(until.getTime() - 1);
  if (to < from) throw new BadRequestException(['end_date must not be before start_date']);
  return { from, to, until };
}

function instant(name: string, value: string): Date {
  const text = DATE_ONLY.test(value) || HAS_ZONE.test(value) || !value.includes('T') ? value : `${value}Z`;
  const date = new Date(DATE_ONLY.test(text) ? `${text}T00:00:00.000Z` : text);
  if (Number.isNaN(date.getTime())) throw new BadRequestException([`${name} must be an ISO 8601 date or date-time`]);
  return date;
}
