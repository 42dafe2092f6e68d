import Decimal from 'decimal.js';
import type { JengaConfig } from '../rails-config';
import { operatorAmount } from '../operator-json';
import type { OperatorBalance, OperatorMovement, OperatorStatement, ReconciliationPeriod } from '../operator-statement';
import type { JengaBody, JengaClient } from './jenga.client';

const FULL_STATEMENT_PATH = '/v3-apis/account-api/v3.0/accounts/fullstatement';
const BALANCE_PATH = '/v3-apis/account-api/v3.0/accounts/balances';
const COUNTRY = 'KE';
/** Rows asked for per page ("Account Full Statement": `limit`). */
export const STATEMENT_PAGE_SIZE = 50;
const MAX_PAGES = 2000;
/** Our PesaLink transfer.reference (12 digits) as it may appear in a row's description. */
const TRANSFER_REFERENCE = /\b\d{12}\b/;

/**
 * What Equity says moved on our source account: "Account Full Statement" for the period's days, page by page (the
 * next page asked from the last row read: its date, reference, serial, postedDateTime and running balance, as the
 * page documents), and "Account Balance". Every row is reported, fees and transfers in included: the statement is
 * the account's, not only our payouts'. A page that fails throws; rows are never returned from a partial listing.
 */
export class JengaStatement implements OperatorStatement {
  readonly rail = 'jenga' as const;

  constructor(
    private readonly config: JengaConfig,
    private readonly client: JengaClient,
  ) {}

  async movements(period: ReconciliationPeriod): Promise<OperatorMovement[]> {
    const account = this.config.sourceAccountNumber;
    const fromDate = day(period.from);
    // The statement takes whole days (toDate inclusive): rows outside the period are dropped below.
    const toDate = day(new Date(period.to.getTime() - 1));
    const rows: OperatorMovement[] = [];
    let cursor: JengaBody = {};
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const body = { countryCode: COUNTRY, accountNumber: account, fromDate, toDate, limit: STATEMENT_PAGE_SIZE, ...cursor };
      // "Account Full Statement": signature over accountNumber + countryCode + toDate.
      const answer = await this.client.call('POST', FULL_STATEMENT_PATH, body, this.client.signature([account, COUNTRY, toDate]));
      const data = (answer.data ?? null) as JengaBody | null;
      const transactions = data?.transactions;
      if (!Array.isArray(transactions)) throw new Error(`Jenga's full statement answered no transactions list (page ${page + 1})`);
      const currency = String(data!.currency ?? 'KES');
      for (const row of transactions as JengaBody[]) {
        const movement = statementMovement(row, currency);
        if (movement.at >= period.from && movement.at < period.to) rows.push(movement);
      }
      if (transactions.length < STATEMENT_PAGE_SIZE) return rows;
      const last = transactions[transactions.length - 1] as JengaBody;
      cursor = {
        date: last.date,
        reference: last.reference,
        serial: last.serial,
        postedDateTime: last.postedDateTime,
        runningBalance: last.runningBalance,
      };
    }
    throw new Error(`Jenga's full statement kept answering rows past ${MAX_PAGES} pages`);
  }

  async balance(): Promise<OperatorBalance> {
    const account = this.config.sourceAccountNumber;
    // "Account Balance": signature over countryCode + accountId.
    const answer = await this.client.call(
      'GET',
      `${BALANCE_PATH}/${COUNTRY}/${encodeURIComponent(account)}`,
      null,
      this.client.signature([COUNTRY, account]),
    );
    const data = (answer.data ?? {}) as JengaBody;
    const balances = Array.isArray(data.balances) ? (data.balances as JengaBody[]) : [];
    // The account's booked balance ("Current"); "Available" leaves out holds and uncleared funds.
    const current = balances.find((entry) => String(entry.type).toLowerCase() === 'current');
    const amount = operatorAmount(current?.amount);
    if (!amount || !data.currency) throw new Error(`Jenga's account balance answered no Current balance: ${JSON.stringify(data)}`);
    return { amount, currency: String(data.currency), at: new Date(), evidence: { answer } };
  }
}

function statementMovement(row: JengaBody, currency: string): OperatorMovement {
  const amount = operatorAmount(row.amount);
  const type = String(row.type ?? '').toLowerCase();
  const at = nairobiTime(String(row.postedDateTime ?? row.date ?? ''));
  const reference = row.reference === undefined || row.reference === null ? '' : String(row.reference);
  if (!amount || (type !== 'debit' && type !== 'credit') || Number.isNaN(at) || !reference) {
    throw new Error(`Jenga's full statement answered a row we cannot read: ${JSON.stringify(row)}`);
  }
  const description = String(row.description ?? '');
  return {
    operatorReference: reference,
    ourReference: TRANSFER_REFERENCE.exec(description)?.[0] ?? null,
    counterparty: null,
    amount: new Decimal(amount).abs(),
    currency,
    direction: type === 'debit' ? 'OUT' : 'IN',
    status: 'SUCCEEDED',
    at: new Date(at),
    evidence: { query: 'AccountFullStatement', row },
  };
}

/** Jenga writes local (Nairobi) times without an offset: read as such, whatever the server's zone. */
function nairobiTime(stamp: string): number {
  return Date.parse(/[zZ]$|[+-]\d{2}:?\d{2}$/.test(stamp) || !stamp.includes('T') ? stamp : `${stamp}+03:00`);
}

/** A calendar day in Nairobi (YYYY-MM-DD), as the statement takes its dates. */
function day(at: Date): string {
  return new Date(at.getTime() + 3 * 3600_000).toISOString().slice(0, 10);
}
