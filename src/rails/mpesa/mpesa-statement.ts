import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import type { MpesaConfig } from '../rails-config';
import { mapLimited } from '../map-limited';
import { operatorAmount } from '../operator-json';
import type { OperatorBalance, OperatorMovement, OperatorStatement, OurMovement, ReconciliationPeriod } from '../operator-statement';
import type { DarajaBody, DarajaClient } from './daraja.client';
import type { DarajaResultInbox } from './daraja-result-inbox';
import type { MpesaCallbackKind } from './mpesa-gateway';
import { readResult, statusAnswer, UNKNOWN_TO_OPERATOR } from './mpesa-results';

/** "Pull Transactions": how far back the query reaches (the page: the last 48 hours of a shortcode). */
export const PULL_WINDOW_MS = 48 * 3600_000;
const NAIROBI_OFFSET_MS = 3 * 3600_000;
/** Pages read at most in one listing: a query that keeps answering rows past this is a fault, not a day. */
const MAX_PAGES = 1000;
/** Transaction status queries in flight at once (each awaits its result callback). */
const STATUS_CONCURRENCY = 8;
/** "Pull Transactions" register: registered now (1000), or already (1001). */
const REGISTERED = new Set(['1000', '1001']);

/** What the statement needs of the M-Pesa gateway: its configuration, client, and our callback addresses. */
export interface DarajaAccess {
  readonly config: MpesaConfig;
  readonly client: DarajaClient;
  callbackUrl(kind: MpesaCallbackKind, id: string): string;
}

export interface MpesaStatementOptions {
  /** How long a result callback (Account Balance, Transaction Status) is awaited (MPESA_RESULT_WAIT_MS). */
  resultWaitMs: number;
  /** The Pull registration's NominatedNumber (MPESA_PULL_NOMINATED_NUMBER); without it the shortcode is taken as registered. */
  nominatedNumber: string | null;
  now?: () => number;
}

/**
 * What M-Pesa says it moved: Pull Transactions lists the payments into our shortcode (the last 48 hours, paged by
 * OffSetValue); what it does not list (B2C and B2B payouts, reversals) is confirmed one by one by Transaction Status,
 * for each such movement of ours; Account Balance reports each shortcode's accounts. Both of the latter answer on
 * a result callback, awaited within a time limit: a result that does not come makes the listing fail, never shorter.
 */
export class MpesaStatement implements OperatorStatement {
  readonly rail = 'mpesa' as const;
  private registered: Promise<void> | null = null;
  private readonly now: () => number;

  constructor(
    private readonly daraja: DarajaAccess,
    private readonly inbox: DarajaResultInbox,
    private readonly options: MpesaStatementOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  async movements(period: ReconciliationPeriod, ours: readonly OurMovement[]): Promise<OperatorMovement[]> {
    const listed = await this.pulled(period);
    const confirmed = await this.confirmed(ours.filter((movement) => movement.direction === 'OUT'));
    return [...listed, ...confirmed];
  }

  async balance(): Promise<OperatorBalance> {
    const { shortcode, payoutShortcode } = this.daraja.config;
    const shortcodes = [...new Set([shortcode, payoutShortcode])];
    const answers = await Promise.all(shortcodes.map((code) => this.accountBalance(code)));
    const accounts = answers.flatMap((answer) => answer.accounts);
    const currencies = [...new Set(accounts.map((account) => account.currency))];
    if (currencies.length !== 1)
      throw new Error(`M-Pesa Account Balance answered ${currencies.length ? currencies.join(', ') : 'no accounts'}: not one currency`);
    return {
      amount: accounts.reduce((sum, account) => sum.plus(account.amount), new Decimal(0)),
      currency: currencies[0],
      at: new Date(Math.max(...answers.map((answer) => answer.at.getTime()))),
      evidence: {
        shortcodes: answers.map(({ shortcode: code, accounts: list, result }) => ({
          shortcode: code,
          accounts: list.map((a) => ({ ...a, amount: a.amount.toFixed() })),
          result,
        })),
      },
    };
  }

  /** Every page of Pull Transactions for the period (OffSetValue moves by the rows read, until a page is empty). */
  private async pulled(period: ReconciliationPeriod): Promise<OperatorMovement[]> {
    if (period.from.getTime() < this.now() - PULL_WINDOW_MS) {
      throw new Error(
        `M-Pesa Pull Transactions lists the last 48 hours only: the period from ${period.from.toISOString()} is older (recover it from the M-Pesa org portal statement)`,
      );
    }
    await this.register();
    const rows: OperatorMovement[] = [];
    let offset = 0;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const answer = await this.daraja.client.post('/pulltransactions/v1/query', {
        ShortCode: this.daraja.config.shortcode,
        StartDate: nairobiTime(period.from),
        EndDate: nairobiTime(period.to),
        OffSetValue: String(offset),
      });
      const code = String(answer.ResponseCode ?? '');
      if (code !== '1000')
        throw new Error(
          `M-Pesa Pull Transactions answered ResponseCode ${code || 'none'} at offset ${offset}: ${String(answer.ResponseMessage ?? '')}`,
        );
      const found = pageRows(answer.Response);
      if (found === null) throw new Error(`M-Pesa Pull Transactions answered no Response list at offset ${offset}`);
      if (found.length === 0) return rows;
      rows.push(...found.map(pulledMovement));
      offset += found.length;
    }
    throw new Error(`M-Pesa Pull Transactions kept answering rows past ${MAX_PAGES} pages`);
  }

  /** The Pull registration, once per process: a shortcode already registered is answered 1001, which is fine. */
  private register(): Promise<void> {
    const nominated = this.options.nominatedNumber;
    if (!nominated) return Promise.resolve();
    this.registered ??= this.daraja.client
      .post('/pulltransactions/v1/register', {
        ShortCode: this.daraja.config.shortcode,
        RequestType: 'Pull',
        NominatedNumber: nominated,
        CallBackURL: this.daraja.callbackUrl('pull', 'register'),
      })
      .then((answer) => {
        // The page writes its keys with a space ("Response Status"); accept both spellings.
        const status = String(answer['Response Status'] ?? answer.ResponseStatus ?? answer.ResponseCode ?? '');
        if (!REGISTERED.has(status))
          throw new Error(
            `M-Pesa refused the Pull registration: ${status} ${String(answer['Response Description'] ?? answer.ResponseDescription ?? '')}`,
          );
      })
      .catch((error: Error) => {
        this.registered = null;
        throw error;
      });
    return this.registered;
  }

  /** Transaction Status of each movement of ours Pull does not list, a few at a time. */
  private async confirmed(outgoing: OurMovement[]): Promise<OperatorMovement[]> {
    const found = await mapLimited(outgoing, STATUS_CONCURRENCY, (movement) => this.status(movement));
    return found.filter((movement): movement is OperatorMovement => movement !== null);
  }

  /** What M-Pesa says of one payout or reversal of ours: null when it holds no such transaction (R000002). */
  private async status(ours: OurMovement): Promise<OperatorMovement | null> {
    const id = randomUUID();
    const config = this.daraja.config;
    const result = await this.query(id, '/mpesa/transactionstatus/v1/query', {
      Initiator: config.initiatorName,
      SecurityCredential: this.daraja.client.initiatorCredential(),
      CommandID: 'TransactionStatusQuery',
      ...(ours.operatorReference ? { TransactionID: ours.operatorReference } : { OriginalConversationID: ours.ourReference }),
      PartyA: ours.kind === 'REFUND' ? config.shortcode : config.payoutShortcode,
      IdentifierType: '4',
      ResultURL: this.daraja.callbackUrl('query-result', id),
      QueueTimeOutURL: this.daraja.callbackUrl('query-timeout', id),
      Remarks: 'Reconciliation',
    });
    const read = readResult(result);
    if (!read) throw new Error(`M-Pesa's Transaction Status result about ${ours.recordId} is not a result`);
    const answer = statusAnswer(read);
    if (answer === UNKNOWN_TO_OPERATOR) return null;
    if ('notYet' in answer && answer.notYet === 'query-failed') {
      throw new Error(`M-Pesa refused the Transaction Status query about ${ours.recordId}: ${answer.word}`);
    }
    const parameter = (name: string) => resultParameter(read.parameters, name);
    const status = 'notYet' in answer ? 'PENDING' : answer.outcome === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED';
    const amount = operatorAmount(parameter('Amount'));
    if (!amount && status === 'SUCCEEDED') throw new Error(`M-Pesa's Transaction Status result about ${ours.recordId} has no Amount`);
    const finalised = parameter('FinalisedTime');
    return {
      operatorReference: parameter('ReceiptNo') || ours.operatorReference || read.transactionId || id,
      ourReference: parameter('OriginatorConversationID') ?? (ours.operatorReference ? null : ours.ourReference),
      counterparty: partyNumber(parameter('CreditPartyName')),
      amount: amount ?? ours.amount,
      currency: 'KES',
      direction: 'OUT',
      status,
      at: finalised ? nairobiDate(finalised) : ours.at,
      evidence: { query: 'TransactionStatus', about: ours.recordId, result: result as Record<string, unknown> },
    };
  }

  private async accountBalance(shortcode: string) {
    const id = randomUUID();
    const config = this.daraja.config;
    const result = await this.query(id, '/mpesa/accountbalance/v1/query', {
      Initiator: config.initiatorName,
      SecurityCredential: this.daraja.client.initiatorCredential(),
      CommandID: 'AccountBalance',
      PartyA: shortcode,
      IdentifierType: '4',
      Remarks: 'Reconciliation',
      QueueTimeOutURL: this.daraja.callbackUrl('query-timeout', id),
      ResultURL: this.daraja.callbackUrl('query-result', id),
    });
    const read = readResult(result);
    if (!read || read.code !== '0')
      throw new Error(`M-Pesa Account Balance of ${shortcode} failed: ${read ? `${read.code} ${read.description}` : 'not a result'}`);
    const accounts = balanceAccounts(resultParameter(read.parameters, 'AccountBalance'));
    if (!accounts) throw new Error(`M-Pesa Account Balance of ${shortcode} answered no readable AccountBalance`);
    const completed = resultParameter(read.parameters, 'BOCompletedTime');
    return { shortcode, accounts, at: completed ? nairobiDate(completed) : new Date(this.now()), result };
  }

  /** Sends an asynchronous query and awaits its result callback; a queue time-out, refusal or silence throws. */
  private async query(id: string, path: string, body: DarajaBody): Promise<unknown> {
    await this.inbox.open(id, this.options.resultWaitMs + 60_000);
    const answer = await this.daraja.client.post(path, body);
    if (String(answer.ResponseCode) !== '0')
      throw new Error(`M-Pesa refused ${path}: ${String(answer.ResponseCode)} ${String(answer.ResponseDescription ?? '')}`);
    const result = await this.inbox.wait(id, this.options.resultWaitMs);
    if (result === null) throw new Error(`M-Pesa did not post the result of ${path} within ${this.options.resultWaitMs} ms`);
    if ((result as { timedOut?: unknown }).timedOut === true) throw new Error(`M-Pesa posted a queue time-out for ${path}: no result`);
    return result;
  }
}

/** A page's rows: the page shows `Response` as a list holding one list of rows; a flat list is read too. */
function pageRows(response: unknown): Record<string, unknown>[] | null {
  if (!Array.isArray(response)) return null;
  return response.flatMap((entry) => (Array.isArray(entry) ? entry : [entry])).filter((row) => row && typeof row === 'object');
}

function pulledMovement(row: Record<string, unknown>): OperatorMovement {
  const amount = operatorAmount(row.amount);
  const reference = row.transactionId === undefined || row.transactionId === null ? '' : String(row.transactionId);
  const at = Date.parse(String(row.trxDate ?? ''));
  if (!amount || !reference || Number.isNaN(at))
    throw new Error(`M-Pesa Pull Transactions answered a row we cannot read: ${JSON.stringify(row)}`);
  return {
    operatorReference: reference,
    ourReference:
      row.billreference === undefined || row.billreference === null || row.billreference === '' ? null : String(row.billreference),
    counterparty: row.msisdn === undefined || row.msisdn === null ? null : String(row.msisdn),
    amount: amount.abs(),
    currency: 'KES',
    direction: 'IN',
    status: 'SUCCEEDED',
    at: new Date(at),
    evidence: { query: 'PullTransactions', row },
  };
}

/** "Working Account|KES|46713.00|46713.00|0.00|0.00&Utility Account|KES|…": each account with its first amount. */
export function balanceAccounts(value: string | null): { account: string; currency: string; amount: Decimal }[] | null {
  if (!value) return null;
  const accounts = value.split('&').map((line) => {
    const [account, currency, amount] = line.split('|');
    const parsed = operatorAmount(amount);
    return parsed && currency ? { account, currency, amount: parsed } : null;
  });
  return accounts.every((account) => account !== null) ? (accounts as { account: string; currency: string; amount: Decimal }[]) : null;
}

type Parameter = { Key?: unknown; Value?: unknown };
function resultParameter(parameters: unknown, name: string): string | null {
  const list = (Array.isArray(parameters) ? parameters : parameters && typeof parameters === 'object' ? [parameters] : []) as Parameter[];
  const found = list.find((entry) => entry.Key === name);
  return found?.Value === undefined || found.Value === null ? null : String(found.Value);
}

/** "254708374149 - John Doe" → "254708374149". */
const partyNumber = (party: string | null) => (party ? party.split(' - ')[0].trim() || null : null);

/** Daraja's dates are Nairobi time: "YYYY-MM-DD HH:mm:ss" for Pull, YYYYMMDDHHmmss in results. */
function nairobiTime(at: Date): string {
  return new Date(at.getTime() + NAIROBI_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

function nairobiDate(stamp: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(stamp);
  if (!m) throw new Error(`M-Pesa wrote a time we cannot read: ${stamp}`);
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) - NAIROBI_OFFSET_MS);
}
