import { BadRequestException, Inject, Injectable, Logger, NotFoundException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { PassThrough, Readable } from 'node:stream';
import type { Pool } from 'pg';
import { Money } from '../common/money';
import { parsePeriod, type Period } from '../common/period';
import { APP_CONFIG } from '../infra/config/app-config';
import type { AppConfig } from '../infra/config/app-config';
import { pgPool } from '../infra/database/prepared';
import { ReadReplica } from '../infra/database/read-replica';
import { JOURNAL_ENTRY_KIND } from '../ledger/journal-entry-kind';
import { writePdfStatement } from './pdf-statement.writer';
import type { StatementQueryDto } from './statement-query.dto';
import { FEE_SOURCE, readableNarration, readableSource } from './statement-sources';
import { displayDate, DocType, STATEMENT_CONTENT_TYPES, StatementHeader, StatementRow, StatementRows } from './statement.types';
import { StatementAborted } from './stream-flow';
import { writeXlsxStatement } from './xlsx-statement.writer';

/** Rows fetched from the cursor per round trip: large enough to amortise it, small enough to keep memory flat. */
export const STATEMENT_BATCH_SIZE = 1000;
const CURSOR = 'statement_rows';

const WALLET_SQL = `
  SELECT a.id, a.account_number, a.currency, w.account_name, p.profile_name, c.name AS client_name
  FROM ledger_accounts a
  JOIN wallets w ON w.client_id = a.client_id AND w.id = a.id
  JOIN profiles p ON p.client_id = w.client_id AND p.id = w.profile_id
  JOIN clients c ON c.id = a.client_id
  WHERE a.client_id = $1 AND a.account_number = $2 AND a.kind = 'WALLET'`;

/**
 * The period as a contiguous run of the wallet's postings: from the first posting booked at or after the start to
 * the last one booked before the end. Postings are numbered per account in the order they were applied to it
 * (`account_seq`, taken under the account's row lock), so the rows between the two are exactly the movements from
 * the opening to the closing balance, even where booking times of concurrent entries interleave at the period's
 * edges. Ids would not do: on Citus they come from each node's own sequence.
 */
const PERIOD_SQL = `
  SELECT min(account_seq) AS first_seq, max(account_seq) AS last_seq
  FROM postings WHERE client_id = $4 AND account_id = $1 AND created_at >= $2 AND created_at < $3`;

/** The balance before the period: after the posting before it, or, when that was archived, after the archived months. */
const OPENING_SQL = `
  SELECT coalesce(
    (SELECT balance_after FROM postings WHERE client_id = $3 AND account_id = $1 AND account_seq < $2
     ORDER BY account_seq DESC LIMIT 1),
    (SELECT balance FROM ledger_archived_balances WHERE client_id = $3 AND account_id = $1)) AS balance_after`;

/**
 * One row per wallet posting, with the business record that owns its entry: the wallet operation's transaction
 * record for this account (wallet_operations.entry_id), a collections record (a payment, its split settlement, a
 * collection reversal or its compensation) or a disbursement (a payout's reservation on its float or the refund of
 * a failed one; an airtime request's reservation, one row per recipient, or a failed recipient's refund). Each
 * record gives the merchant-facing id, the merchant's reference, the narration, the source, the recipient's number
 * (disbursements), the gross movement (signed, before the fee) and the fee it carries, and what it booked on the
 * wallet (`net`, with the running balance after it): the posting itself, or for an airtime reservation the
 * recipient's share of it. A wallet transaction's line shows its own time (transaction_date, as the API returns
 * it); other lines show the posting's booking time. Each branch is a lookup by a unique entry id column; the entry-kind guards let Postgres
 * skip the branches that cannot match. Postings of entries without such a record (new kinds) still appear, named
 * after their entry kind.
 */
const ROWS_SQL = `
  SELECT p.account_seq, coalesce(r.occurred_at, p.created_at) AS occurred_at, coalesce(r.net, p.amount) AS amount,
         coalesce(r.balance, p.balance_after) AS balance_after, p.entry_id, e.kind AS entry_kind,
         r.record_id, r.reference, r.narration, r.source, r.recipient, r.gross, r.fee, coalesce(r.line, 0) AS line
  FROM postings p
  JOIN journal_entries e ON e.client_id = p.client_id AND e.id = p.entry_id
  LEFT JOIN LATERAL (
    (SELECT t.id::text AS record_id, t.source_transaction_id AS reference, t.transaction_narration AS narration,
            t.transaction_source AS source, NULL::text AS recipient,
            CASE t.transaction_type WHEN 'CREDIT' THEN t.transaction_amount ELSE -t.transaction_amount END AS gross,
            t.transaction_fee AS fee, p.amount AS net, p.balance_after AS balance, 0 AS line,
            t.transaction_date AS occurred_at
     FROM wallet_operations o
     JOIN wallet_transactions t ON t.client_id = o.client_id AND t.operation_id = o.id AND t.account_id = p.account_id
     WHERE o.client_id = p.client_id AND o.entry_id = p.entry_id
     ORDER BY t.id
     LIMIT 1)
    UNION ALL
    SELECT pay.id::text, pay.external_reference, pay.description, e.kind, NULL,
           sign(p.amount) * pay.service_amount, pay.merchant_fee, p.amount, p.balance_after, 0, NULL::timestamptz
    FROM payments pay WHERE e.kind = '${JOURNAL_ENTRY_KIND.PAYMENT}' AND pay.client_id = p.client_id AND pay.entry_id = p.entry_id
    UNION ALL
    SELECT pay.id::text, pay.external_reference, pay.description, e.kind, NULL, p.amount, 0, p.amount, p.balance_after, 0, NULL::timestamptz
    FROM payments pay
    WHERE e.kind = '${JOURNAL_ENTRY_KIND.PAYMENT_SPLIT}' AND pay.client_id = p.client_id AND pay.split_entry_id = p.entry_id
    UNION ALL
    SELECT pay.id::text, cr.reversal_reference, cr.reversal_reason, e.kind, NULL,
           sign(p.amount) * pay.service_amount, pay.merchant_fee, p.amount, p.balance_after, 0, NULL::timestamptz
    FROM collection_reversals cr JOIN payments pay ON pay.client_id = cr.client_id AND pay.id = cr.payment_id
    WHERE e.kind = '${JOURNAL_ENTRY_KIND.COLLECTION_REVERSAL}' AND cr.client_id = p.client_id AND cr.entry_id = p.entry_id
    UNION ALL
    SELECT pay.id::text, cr.reversal_reference, cr.reversal_reason, e.kind, NULL,
           sign(p.amount) * pay.service_amount, pay.merchant_fee, p.amount, p.balance_after, 0, NULL::timestamptz
    FROM collection_reversals cr JOIN payments pay ON pay.client_id = cr.client_id AND pay.id = cr.payment_id
    WHERE e.kind = '${JOURNAL_ENTRY_KIND.COLLECTION_REVERSAL_COMPENSATION}' AND cr.client_id = p.client_id
      AND cr.compensation_entry_id = p.entry_id
    UNION ALL
    SELECT po.id::text, po.payout_reference, coalesce(po.request->>'payment_description', ''), 'PAYOUT_' || po.kind,
           po.recipient_account_number, -po.amount, po.fee, p.amount, p.balance_after, 0, NULL::timestamptz
    FROM float_reservations fr JOIN float_holds h ON h.client_id = fr.client_id AND h.reservation_id = fr.id
    JOIN payouts po ON po.client_id = h.client_id AND po.hold_id = h.id
    WHERE e.kind = '${JOURNAL_ENTRY_KIND.FLOAT_RESERVE}' AND fr.client_id = p.client_id AND fr.reserve_entry_id = p.entry_id
    UNION ALL
    SELECT po.id::text, po.payout_reference, coalesce(po.result_description, ''), 'PAYOUT_REFUND', NULL,
           po.amount, po.fee, p.amount, p.balance_after, 0, NULL::timestamptz
    FROM float_holds h JOIN payouts po ON po.client_id = h.client_id AND po.hold_id = h.id
    WHERE e.kind = '${JOURNAL_ENTRY_KIND.FLOAT_RELEASE}' AND h.client_id = p.client_id AND h.outcome_entry_id = p.entry_id
    UNION ALL
    SELECT ar.correlation_id::text, rq.reference, '', 'AIRTIME', ar.phone_number, -ar.amount, ar.fee, -(ar.amount + ar.fee),
           p.balance_after - p.amount - sum(ar.amount + ar.fee) OVER (ORDER BY ar.position), ar.position, NULL::timestamptz
    FROM float_reservations fr JOIN airtime_requests rq ON rq.client_id = fr.client_id AND rq.reservation_id = fr.id
    JOIN airtime_recipients ar ON ar.client_id = rq.client_id AND ar.request_id = rq.id
    WHERE e.kind = '${JOURNAL_ENTRY_KIND.FLOAT_RESERVE}' AND fr.client_id = p.client_id AND fr.reserve_entry_id = p.entry_id
    UNION ALL
    SELECT ar.correlation_id::text, rq.reference, ar.message, 'AIRTIME_REFUND', ar.phone_number, ar.amount, ar.fee,
           p.amount, p.balance_after, 0, NULL::timestamptz
    FROM float_holds h JOIN airtime_recipients ar ON ar.client_id = h.client_id AND ar.hold_id = h.id
    JOIN airtime_requests rq ON rq.client_id = ar.client_id AND rq.id = ar.request_id
    WHERE e.kind = '${JOURNAL_ENTRY_KIND.FLOAT_RELEASE}' AND h.client_id = p.client_id AND h.outcome_entry_id = p.entry_id
  ) r ON true
  WHERE p.client_id = $4 AND p.account_id = $1 AND p.account_seq BETWEEN $2 AND $3
  ORDER BY p.account_seq, line`;

/**
 * ROWS_SQL with, on every row, how many lines the whole statement makes (one per row, two for a row whose record
 * carries a fee): a PDF numbers its pages from it before drawing the first. The window makes Postgres read
 * every row before it returns the first and keep them in a tuplestore for the cursor, so the count costs no second
 * pass over the postings (a separate count query doubled the database's work).
 */
const ROWS_WITH_LINES_SQL = `
  SELECT rows.*, sum(CASE WHEN rows.fee > 0 AND rows.amount <> rows.gross THEN 2 ELSE 1 END) OVER ()::int AS lines
  FROM (${ROWS_SQL}) rows
  ORDER BY rows.account_seq, rows.line`;

interface RawRow {
  account_seq: string;
  occurred_at: Date;
  amount: string;
  balance_after: string;
  entry_id: string;
  entry_kind: string;
  record_id: string | null;
  reference: string | null;
  narration: string | null;
  source: string | null;
  /** The recipient's number (disbursements), shown masked. */
  recipient: string | null;
  gross: string | null;
  fee: string | null;
  /** ROWS_WITH_LINES_SQL only. */
  lines?: number;
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

  constructor(
    private readonly replica: ReadReplica,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Validates the request and opens the statement: everything that can answer 400 or 404 happens here, before a
   * byte of the document is sent. The whole statement reads one REPEATABLE READ snapshot, so its opening balance,
   * rows and closing balance agree even while money keeps moving. Read from the replica when there is one.
   */
  open(clientId: string, query: StatementQueryDto, docType: DocType = query.doc_type): Promise<OpenStatement> {
    const period = parsePeriod(query.start_date, query.end_date);
    return this.replica.read((db) => this.openOn(pgPool(db), clientId, query, period, docType));
  }

  private async openOn(pool: Pool, clientId: string, query: StatementQueryDto, period: Period, docType: DocType): Promise<OpenStatement> {
    const client = await pool.connect();
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

    let done = false;
    const fetchBatch = async (): Promise<RawRow[]> => {
      if (done) return [];
      const { rows: raw } = await client.query<RawRow>(`FETCH ${STATEMENT_BATCH_SIZE} FROM ${CURSOR}`);
      if (raw.length < STATEMENT_BATCH_SIZE) done = true;
      return raw;
    };

    try {
      // The rows query is a nested loop of index lookups: JIT compiling it took longer than running it.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL jit = off');
      const { rows: wallets } = await client.query(WALLET_SQL, [clientId, query.account_number]);
      const wallet = wallets[0];
      if (!wallet) throw new NotFoundException('Wallet not found');
      const { rows: bounds } = await client.query(PERIOD_SQL, [wallet.id, period.from, period.until, clientId]);
      const { first_seq: first, last_seq: last } = bounds[0];
      if (first === null) throw new BadRequestException('No transactions in the period');
      const { rows: before } = await client.query(OPENING_SQL, [wallet.id, first, clientId]);
      // Only a PDF numbers its pages ("Page X of N"), which needs the number of lines before the first is laid out:
      // its first batch is read now, and carries that number.
      const numbered = docType === 'PDF';
      await client.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${numbered ? ROWS_WITH_LINES_SQL : ROWS_SQL}`, [
        wallet.id,
        first,
        last,
        clientId,
      ]);
      let prefetched = numbered ? await fetchBatch() : null;
      const rowCount = prefetched ? (prefetched[0]?.lines ?? 0) : null;

      const header: StatementHeader = {
        issuerName: this.config.issuerName,
        accountNumber: wallet.account_number,
        accountName: wallet.account_name,
        currency: wallet.currency,
        ownerName: wallet.profile_name,
        clientName: wallet.client_name,
        from: period.from,
        to: period.to,
        openingBalance: new Money(before[0]?.balance_after ?? 0).toFixed(4),
        generatedAt: new Date(),
        rowCount,
      };
      const rows: StatementRows = {
        next: async () => {
          const raw = prefetched ?? (await fetchBatch());
          prefetched = null;
          const lines: StatementRow[] = [];
          for (const posting of raw) appendStatementRows(posting, lines);
          return lines;
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
   * Sends an open statement as the response: an attachment streamed as it is written. However Fastify ends the
   * response, the writer stops and the connection is given back.
   */
  send(reply: FastifyReply, statement: OpenStatement, docType: DocType): FastifyReply {
    const body = this.stream(statement, docType);
    reply.raw.once('close', () => {
      if (!body.readableEnded) body.destroy();
    });
    return reply
      .status(200)
      .header('content-type', statement.contentType)
      .header('content-disposition', `attachment; filename="${statement.fileName}"`)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(body);
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
}

/**
 * Appends the lines of one row (a posting, or a recipient's share of one) to `lines`. A row whose record carries a
 * fee is shown as two lines: the
 * movement at its gross amount, then the fee as it was booked (the difference between the posting and the gross:
 * a debit when charged, a credit when a reversal refunds it), the first with the balance before the fee, the second
 * with the posting's own running balance.
 */
function appendStatementRows(raw: RawRow, lines: StatementRow[]): void {
  const { occurred_at: occurredAt, record_id: transactionId, reference, amount, balance_after: balanceAfter } = raw;
  if (transactionId === null) {
    const source = readableSource(raw.entry_kind);
    lines.push({ occurredAt, transactionId, reference, narration: `Ledger entry ${raw.entry_id}`, source, amount, balanceAfter });
    return;
  }
  const code = raw.source ?? raw.entry_kind;
  const narration = readableNarration(code, raw.narration ?? '', raw.recipient);
  const source = readableSource(code, raw.recipient);
  // Most postings carry no fee: the same numeric text for the posting and the gross needs no decimal arithmetic.
  const fee = raw.gross === null || raw.gross === amount ? null : new Money(amount).minus(raw.gross);
  if (fee === null || fee.isZero() || !new Money(raw.fee ?? 0).gt(0)) {
    lines.push({ occurredAt, transactionId, reference, narration, source, amount, balanceAfter });
    return;
  }
  lines.push(
    {
      occurredAt,
      transactionId,
      reference,
      narration,
      source,
      amount: new Money(raw.gross!).toFixed(4),
      balanceAfter: new Money(balanceAfter).minus(fee).toFixed(4),
    },
    {
      occurredAt,
      transactionId,
      reference,
      narration: fee.isNegative() ? 'Transaction fee' : 'Transaction fee refunded',
      source: FEE_SOURCE,
      amount: fee.toFixed(4),
      balanceAfter,
    },
  );
}
