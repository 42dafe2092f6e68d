import { createPrivateKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  B2B_ANSWER,
  B2B_RESULT_PAID,
  B2C_ANSWER,
  B2C_RESULT_DESCRIPTIONS,
  B2C_RESULT_PAID,
  BALANCE_RESULT,
  ERRORS,
  PULL_QUERY_ANSWER,
  PULL_REGISTER_ANSWER,
  REVERSAL_RESULT_DONE,
  STATUS_ANSWER,
  STATUS_RESULT,
  STK_CALLBACK_PAID,
  STK_PUSH_ANSWER,
  STK_QUERY_ANSWER,
  STK_RESULT_DESCRIPTIONS,
  TOKEN_ANSWER,
  TOKEN_ERRORS,
} from '../fixtures/daraja/documented';
import { closeServer } from './gateway-fixtures';

/** The test-only key pair the stub plays Safaricom with (test/fixtures/daraja; never a real certificate). */
export const STUB_CERTIFICATE_PATH = join(__dirname, '..', 'fixtures', 'daraja', 'stub-certificate.pem');
const STUB_PRIVATE_KEY = readFileSync(join(__dirname, '..', 'fixtures', 'daraja', 'stub-key.pem'), 'utf8');

export type DarajaOperation = 'STK_PUSH' | 'B2C' | 'B2B' | 'REVERSAL';

/**
 * How the stub treats one request. `fault` is how the API call answers: a normal answer, a Daraja busy error
 * (not taken), a 500 or a time-out after taking it (`taken`, default true) or without. `callback` says how the
 * result is called back (`timeout`: the queue time-out URL instead), after `delayMs`.
 */
export interface DarajaPlan {
  fault?: 'none' | 'busy' | 'http500' | 'timeout' | 'refuse';
  taken?: boolean;
  resultCode?: string;
  callback?: 'once' | 'twice' | 'never' | 'timeout';
  delayMs?: number;
}

export interface StubTransaction {
  operation: DarajaOperation;
  body: Record<string, any>;
  conversationId: string;
  originatorConversationId: string;
  checkoutRequestId: string;
  merchantRequestId: string;
  resultCode: string;
  receipt: string;
  plan: DarajaPlan;
}

export const STUB_CREDENTIALS = {
  MPESA_CONSUMER_KEY: 'stub-consumer-key',
  MPESA_CONSUMER_SECRET: 'stub-consumer-secret',
  MPESA_SHORTCODE: '174379',
  MPESA_PASSKEY: 'stub-passkey',
  MPESA_PAYOUT_SHORTCODE: '600996',
  MPESA_INITIATOR_NAME: 'testapi',
  MPESA_INITIATOR_PASSWORD: 'Safaricom999!*!',
  MPESA_CERTIFICATE_PATH: STUB_CERTIFICATE_PATH,
};

/** One row of Pull Transactions as the page lists it, and from which query of the stub on it is listed (late rows). */
export interface PullRow {
  row: Record<string, unknown>;
  /** Listed from this query on (1: the first); a row M-Pesa shows late. */
  fromQuery?: number;
}

const PATHS: Record<string, DarajaOperation | 'STK_QUERY' | 'STATUS' | 'BALANCE' | 'PULL_REGISTER' | 'PULL_QUERY'> = {
  '/pulltransactions/v1/register': 'PULL_REGISTER',
  '/pulltransactions/v1/query': 'PULL_QUERY',
  '/mpesa/stkpush/v1/processrequest': 'STK_PUSH',
  '/mpesa/stkpushquery/v1/query': 'STK_QUERY',
  '/mpesa/b2c/v3/paymentrequest': 'B2C',
  '/mpesa/b2b/v1/paymentrequest': 'B2B',
  '/mpesa/reversal/v1/request': 'REVERSAL',
  '/mpesa/transactionstatus/v1/query': 'STATUS',
  '/mpesa/accountbalance/v1/query': 'BALANCE',
};

/**
 * Safaricom Daraja played locally from its documented payloads (test/fixtures/daraja/documented.ts, one API page
 * each): OAuth tokens, STK push and query, B2C, B2B, reversal, transaction status and balance. Each call checks
 * what the page requires: the bearer token, the STK password, the SecurityCredential (decrypted with the
 * certificate's key), every required field and its documented limits, answering the pages' error body
 * (`{requestId, errorCode, errorMessage}`) with their codes and HTTP statuses otherwise. Results come back as
 * planned: on time, late, twice, never, or by queue time-out. It counts every API call so tests can prove a
 * request was never sent twice.
 */
export class DarajaStub {
  readonly calls: { operation: string; body: Record<string, any>; at: number }[] = [];
  readonly transactions: StubTransaction[] = [];
  /** Every callback the stub posted, with the status our server answered (0: unreachable). */
  readonly delivered: { url: string; status: number }[] = [];
  tokensIssued = 0;
  /** Seconds a token lives: a number on the "Authorization" page, a string on some deployments. */
  tokenSeconds: string | number = TOKEN_ANSWER.expires_in;
  /** The plan of each request; tests replace it. */
  plan: (operation: DarajaOperation, body: Record<string, any>) => DarajaPlan = () => ({});
  /** False: transaction status queries are taken but their results never come (M-Pesa's result queue is down). */
  answersStatusQueries = true;
  /** False: every STK query answers that the push is still being processed (nothing known yet). */
  answersStkQueries = true;
  /** The TransactionStatus word status queries report, when a test sets one (null: Completed or Failed). */
  statusWord: string | null = null;
  /** Pull Transactions: the shortcode's rows (tests add them: ours, duplicates, rows we never sent, late ones). */
  pullRows: PullRow[] = [];
  /** Rows per Pull page. */
  pullPageSize = 2;
  /** How the Pull page at an OffSetValue fails, when a test says so. */
  pullFaults = new Map<number, 'http500' | 'timeout' | 'error'>();
  /** Pull queries answered so far (a whole listing counts once per page read). */
  pullListings = 0;
  /** How Account Balance results come: at once, after `balanceDelayMs`, never, or as a queue time-out. */
  balanceCallback: 'once' | 'never' | 'timeout' = 'once';
  balanceDelayMs = 0;
  /** The AccountBalance value the result carries. */
  balanceValue: string = BALANCE_RESULT.Result.ResultParameters.ResultParameter[0].Value as string;
  private readonly tokens = new Set<string>();
  private readonly pending = new Set<NodeJS.Timeout>();
  private server!: Server;
  baseUrl = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** API calls of an operation (STK_PUSH, B2C, B2B, REVERSAL, STK_QUERY, STATUS). */
  sent(operation: string, match: (body: Record<string, any>) => boolean = () => true): number {
    return this.calls.filter((call) => call.operation === operation && match(call.body)).length;
  }

  async close(): Promise<void> {
    for (const timer of this.pending) clearTimeout(timer);
    await closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const url = new URL(req.url ?? '/', this.baseUrl);
    if (url.pathname === '/oauth/v1/generate') return this.token(req, url, res);
    const operation = PATHS[url.pathname];
    if (!operation) return fail(res, ERRORS.notFound);
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!this.tokens.has(bearer)) return fail(res, ERRORS.invalidToken);
    let body: Record<string, any>;
    try {
      body = JSON.parse(raw);
    } catch {
      return fail(res, ERRORS.invalidField, 'JSON');
    }
    this.calls.push({ operation, body, at: Date.now() });
    if (operation === 'PULL_REGISTER') return this.pullRegister(res, body);
    if (operation === 'PULL_QUERY') return this.pullQuery(res, body);
    if (operation === 'STK_PUSH' || operation === 'STK_QUERY') {
      if (!this.stkPasswordValid(body)) return fail(res, ERRORS.invalidField, 'Password');
    } else if (!this.credentialValid(body.SecurityCredential)) {
      return fail(res, ERRORS.invalidField, 'SecurityCredential');
    }
    const invalid = invalidField(operation, body);
    if (invalid) return fail(res, ERRORS.invalidField, invalid);
    if (operation === 'STK_QUERY') return this.stkQuery(res, body);
    if (operation === 'STATUS') return this.statusQuery(res, body);
    if (operation === 'BALANCE') return this.balance(res, body);
    this.transaction(res, operation, body);
  }

  /** "Authorization": Basic base64(key:secret) and `grant_type=client_credentials`. */
  private token(req: IncomingMessage, url: URL, res: ServerResponse): void {
    if (url.searchParams.get('grant_type') !== 'client_credentials')
      return json(res, 400, { requestId: id('rq'), ...TOKEN_ERRORS.grantType });
    const expected = Buffer.from(`${STUB_CREDENTIALS.MPESA_CONSUMER_KEY}:${STUB_CREDENTIALS.MPESA_CONSUMER_SECRET}`).toString('base64');
    if (req.headers.authorization !== `Basic ${expected}`) {
      return json(res, 400, { requestId: id('rq'), ...TOKEN_ERRORS.authenticationType });
    }
    const token = randomBytes(12).toString('hex');
    this.tokens.add(token);
    this.tokensIssued += 1;
    json(res, 200, { ...TOKEN_ANSWER, access_token: token, expires_in: this.tokenSeconds });
  }

  private transaction(res: ServerResponse, operation: DarajaOperation, body: Record<string, any>): void {
    if (operation === 'B2C' && this.transactions.some((t) => t.originatorConversationId === body.OriginatorConversationID)) {
      return fail(res, ERRORS.duplicateOriginator);
    }
    const plan = {
      fault: 'none',
      taken: true,
      resultCode: '0',
      callback: 'once',
      delayMs: 0,
      ...this.plan(operation, body),
    } as Required<DarajaPlan>;
    if (plan.fault === 'busy') return fail(res, ERRORS.spikeArrest);
    if (plan.fault === 'refuse') return fail(res, ERRORS.invalidField, operation === 'STK_PUSH' ? 'PhoneNumber' : 'PartyB');
    if ((plan.fault === 'http500' || plan.fault === 'timeout') && !plan.taken) {
      return plan.fault === 'http500' ? void res.writeHead(500).end('<html>upstream error</html>') : undefined; // a time-out: never answered
    }
    const transaction: StubTransaction = {
      operation,
      body,
      conversationId: id('AG'),
      originatorConversationId: operation === 'B2C' ? String(body.OriginatorConversationID) : id('OC'),
      checkoutRequestId: id('ws_CO'),
      merchantRequestId: id('MR'),
      resultCode: plan.resultCode,
      receipt: `Q${randomBytes(5).toString('hex').toUpperCase().slice(0, 9)}`,
      plan,
    };
    this.transactions.push(transaction);
    this.scheduleResult(transaction);
    if (plan.fault === 'http500') return void res.writeHead(500).end('<html>upstream error</html>');
    if (plan.fault === 'timeout') return; // taken, but the answer never comes back
    if (operation === 'STK_PUSH') {
      return json(res, 200, {
        ...STK_PUSH_ANSWER,
        MerchantRequestID: transaction.merchantRequestId,
        CheckoutRequestID: transaction.checkoutRequestId,
      });
    }
    json(res, 200, {
      ...(operation === 'B2C' ? B2C_ANSWER : B2B_ANSWER),
      ConversationID: transaction.conversationId,
      OriginatorConversationID: transaction.originatorConversationId,
    });
  }

  /** The transaction's result callback, as planned. */
  private scheduleResult(t: StubTransaction): void {
    const { callback, delayMs } = t.plan;
    if (callback === 'never') return;
    const url = t.operation === 'STK_PUSH' ? t.body.CallBackURL : callback === 'timeout' ? t.body.QueueTimeOutURL : t.body.ResultURL;
    const payload = callback === 'timeout' ? this.queueTimeout(t) : this.resultOf(t);
    const times = callback === 'twice' ? 2 : 1;
    for (let i = 0; i < times; i += 1) this.later((delayMs ?? 0) + i * 20, () => this.post(url, payload));
  }

  /** Posts a transaction's result now (a late callback, for tests). */
  async callBack(t: StubTransaction): Promise<number> {
    return this.post(t.operation === 'STK_PUSH' ? t.body.CallBackURL : t.body.ResultURL, this.resultOf(t));
  }

  /** The documented result of the page's operation, with this transaction's identifiers, amount and code. */
  resultOf(t: StubTransaction): Record<string, unknown> {
    const ok = t.resultCode === '0';
    if (t.operation === 'STK_PUSH') {
      const paid = STK_CALLBACK_PAID.Body.stkCallback;
      const metadata = [
        { Name: 'Amount', Value: Number(t.body.Amount) },
        { Name: 'MpesaReceiptNumber', Value: t.receipt },
        { Name: 'TransactionDate', Value: 20261125101010 },
        { Name: 'PhoneNumber', Value: Number(t.body.PhoneNumber) },
      ];
      return {
        Body: {
          stkCallback: {
            MerchantRequestID: t.merchantRequestId,
            CheckoutRequestID: t.checkoutRequestId,
            ResultCode: numeric(t.resultCode),
            ResultDesc: STK_RESULT_DESCRIPTIONS[t.resultCode] ?? `Result ${t.resultCode}`,
            ...(ok ? { CallbackMetadata: { ...paid.CallbackMetadata, Item: metadata } } : {}),
          },
        },
      };
    }
    const documented = t.operation === 'REVERSAL' ? REVERSAL_RESULT_DONE : t.operation === 'B2B' ? B2B_RESULT_PAID : B2C_RESULT_PAID;
    const parameters =
      t.operation === 'B2C'
        ? [
            { Key: 'TransactionAmount', Value: Number(t.body.Amount) },
            { Key: 'TransactionReceipt', Value: t.receipt },
            ...B2C_RESULT_PAID.Result.ResultParameters.ResultParameter.slice(2),
          ]
        : documented.Result.ResultParameters.ResultParameter.map((p) => (p.Key === 'Amount' ? { ...p, Value: `${t.body.Amount}.00` } : p));
    return {
      Result: {
        ...documented.Result,
        ResultCode: t.operation === 'B2B' ? t.resultCode : numeric(t.resultCode),
        ResultDesc: ok ? documented.Result.ResultDesc : (B2C_RESULT_DESCRIPTIONS[t.resultCode] ?? `Result ${t.resultCode}`),
        OriginatorConversationID: t.originatorConversationId,
        ConversationID: t.conversationId,
        // A failed transaction still carries an id, of zeros after the prefix.
        TransactionID: ok ? t.receipt : `${t.receipt.slice(0, 3)}0000000`,
        ResultParameters: ok ? { ResultParameter: parameters } : undefined,
      },
    };
  }

  /** Not on the pages: a queue time-out is posted to QueueTimeOutURL shaped as a result, with no outcome in it. */
  private queueTimeout(t: StubTransaction): Record<string, unknown> {
    return {
      Result: {
        ResultType: 1,
        ResultCode: 1,
        ResultDesc: 'The request was not processed in time',
        OriginatorConversationID: t.originatorConversationId,
        ConversationID: t.conversationId,
        TransactionID: 'NONE',
      },
    };
  }

  private stkQuery(res: ServerResponse, body: Record<string, any>): void {
    const t = this.transactions.find((candidate) => candidate.checkoutRequestId === body.CheckoutRequestID);
    if (!t || !this.answersStkQueries) return fail(res, { ...ERRORS.subscriberLocked, errorMessage: 'The transaction is being processed' });
    json(res, 200, {
      ...STK_QUERY_ANSWER,
      MerchantRequestID: t.merchantRequestId,
      CheckoutRequestID: t.checkoutRequestId,
      ResultCode: t.resultCode,
      ResultDesc: STK_RESULT_DESCRIPTIONS[t.resultCode] ?? `Result ${t.resultCode}`,
    });
  }

  /**
   * Answers at once, then posts the transaction's status to the query's ResultURL ("Transaction Status"). The page
   * shows a completed transaction; a failed one is reported `Failed`, and one M-Pesa does not hold `R000002`
   * (the reversal page's code for a transaction id M-Pesa does not know).
   */
  private statusQuery(res: ServerResponse, body: Record<string, any>): void {
    const t = this.transactions.find(
      (candidate) => candidate.originatorConversationId === body.OriginalConversationID || candidate.receipt === body.TransactionID,
    );
    json(res, 200, { ...STATUS_ANSWER, ConversationID: id('AG'), OriginatorConversationID: id('OC') });
    const status = this.statusWord ?? (t?.resultCode === '0' ? 'Completed' : 'Failed');
    const result = t
      ? {
          ...STATUS_RESULT.Result,
          OriginatorConversationID: id('OC'),
          ConversationID: id('AG'),
          ResultParameters: {
            ResultParameter: STATUS_RESULT.Result.ResultParameters.ResultParameter.map((p) =>
              p.Key === 'TransactionStatus'
                ? { ...p, Value: status }
                : p.Key === 'ReceiptNo'
                  ? { ...p, Value: t.resultCode === '0' ? t.receipt : '' }
                  : p.Key === 'Amount'
                    ? { ...p, Value: String(t.body.Amount) }
                    : p.Key === 'OriginatorConversationID'
                      ? { ...p, Value: t.originatorConversationId }
                      : p,
            ),
          },
        }
      : {
          ResultType: 0,
          ResultCode: 'R000002',
          ResultDesc: 'The OriginalTransactionID is invalid.',
          OriginatorConversationID: id('OC'),
          ConversationID: id('AG'),
          TransactionID: 'SKE0000000',
        };
    if (this.answersStatusQueries) this.later(5, () => this.post(body.ResultURL, { Result: result }));
  }

  /** "Pull Transactions" register: every field required; answered as the page shows (already registered). */
  private pullRegister(res: ServerResponse, body: Record<string, any>): void {
    if (!digits(body.ShortCode, /^\d{5,7}$/)) return fail(res, ERRORS.invalidField, 'ShortCode');
    if (body.RequestType !== 'Pull') return fail(res, ERRORS.invalidField, 'RequestType');
    if (!digits(body.NominatedNumber, /^\d{9,12}$/)) return fail(res, ERRORS.invalidField, 'NominatedNumber');
    if (!url(body.CallBackURL)) return fail(res, ERRORS.invalidField, 'CallBackURL');
    json(res, 200, { ...PULL_REGISTER_ANSWER, ShortCode: body.ShortCode });
  }

  /**
   * "Pull Transactions" query: the rows between StartDate and EndDate (Nairobi time), `pullPageSize` from OffSetValue;
   * an offset past the last row answers an empty list. A planned fault fails that page as M-Pesa does.
   */
  private pullQuery(res: ServerResponse, body: Record<string, any>): void {
    const stamp = /^\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}:\d{2}$/;
    if (!stamp.test(String(body.StartDate))) return fail(res, ERRORS.invalidField, 'StartDate');
    if (!stamp.test(String(body.EndDate))) return fail(res, ERRORS.invalidField, 'EndDate');
    if (!/^\d+$/.test(String(body.OffSetValue))) return fail(res, ERRORS.invalidField, 'OffSetValue');
    const offset = Number(body.OffSetValue);
    if (offset === 0) this.pullListings += 1;
    const fault = this.pullFaults.get(offset);
    if (fault === 'http500') return void res.writeHead(500).end('<html>upstream error</html>');
    if (fault === 'timeout') return;
    if (fault === 'error') return fail(res, ERRORS.spikeArrest);
    const from = Date.parse(`${String(body.StartDate).replace(' ', 'T')}+03:00`);
    const to = Date.parse(`${String(body.EndDate).replace(' ', 'T')}+03:00`);
    const listed = this.pullRows
      .filter((r) => (r.fromQuery ?? 1) <= this.pullListings)
      .map((r) => r.row)
      .filter((row) => {
        const at = Date.parse(String(row.trxDate));
        return at >= from && at <= to;
      });
    json(res, 200, { ...PULL_QUERY_ANSWER, ResponseRefID: id('PR'), Response: [listed.slice(offset, offset + this.pullPageSize)] });
  }

  /** "Account Balance": answers at once, then posts the balance result (or a queue time-out, or nothing) as planned. */
  private balance(res: ServerResponse, body: Record<string, any>): void {
    if (body.CommandID !== 'AccountBalance') return fail(res, ERRORS.invalidField, 'CommandID');
    if (String(body.IdentifierType) !== '4') return fail(res, ERRORS.invalidField, 'IdentifierType');
    if (!digits(body.PartyA, /^\d{5,7}$/)) return fail(res, ERRORS.invalidField, 'PartyA');
    if (!url(body.ResultURL) || !url(body.QueueTimeOutURL)) return fail(res, ERRORS.invalidField, 'ResultURL');
    const conversation = { ConversationID: id('AG'), OriginatorConversationID: id('OC') };
    json(res, 200, { ...B2C_ANSWER, ...conversation });
    if (this.balanceCallback === 'never') return;
    const result =
      this.balanceCallback === 'timeout'
        ? { Result: { ResultType: 1, ResultCode: 1, ResultDesc: 'The request was not processed in time', ...conversation } }
        : {
            Result: {
              ...BALANCE_RESULT.Result,
              ...conversation,
              ResultParameters: {
                ResultParameter: [
                  { Key: 'AccountBalance', Value: this.balanceValue },
                  BALANCE_RESULT.Result.ResultParameters.ResultParameter[1],
                ],
              },
            },
          };
    this.later(this.balanceDelayMs, () => this.post(this.balanceCallback === 'timeout' ? body.QueueTimeOutURL : body.ResultURL, result));
  }

  private stkPasswordValid(body: Record<string, any>): boolean {
    const expected = Buffer.from(`${STUB_CREDENTIALS.MPESA_SHORTCODE}${STUB_CREDENTIALS.MPESA_PASSKEY}${body.Timestamp}`).toString(
      'base64',
    );
    return body.Password === expected && /^\d{14}$/.test(String(body.Timestamp));
  }

  private credentialValid(credential: unknown): boolean {
    const plain = pkcs1v15Decrypt(Buffer.from(String(credential), 'base64'));
    return plain !== null && plain.toString() === STUB_CREDENTIALS.MPESA_INITIATOR_PASSWORD;
  }

  private async post(url: string, body: unknown): Promise<number> {
    const status = await post(url, body);
    this.delivered.push({ url, status });
    return status;
  }

  private later(ms: number, run: () => Promise<unknown>): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      run().catch(() => undefined);
    }, ms);
    this.pending.add(timer);
  }
}

/**
 * RSA PKCS#1 v1.5 decryption with the stub's key, done by hand: Node refuses this padding for private decryption
 * (CVE-2023-46809), yet it is what Daraja expects the SecurityCredential to be encrypted with.
 */
function pkcs1v15Decrypt(cipher: Buffer): Buffer | null {
  const jwk = createPrivateKey(STUB_PRIVATE_KEY).export({ format: 'jwk' });
  const big = (b64: string) => BigInt(`0x${Buffer.from(b64, 'base64url').toString('hex')}`);
  const n = big(jwk.n!);
  const d = big(jwk.d!);
  let result = 1n;
  let base = BigInt(`0x${cipher.toString('hex') || '0'}`) % n;
  for (let e = d; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * base) % n;
    base = (base * base) % n;
  }
  const size = Buffer.from(jwk.n!, 'base64url').length;
  const block = Buffer.from(result.toString(16).padStart(size * 2, '0'), 'hex');
  if (block[0] !== 0 || block[1] !== 2) return null;
  const end = block.indexOf(0, 2);
  return end < 10 ? null : block.subarray(end + 1);
}

function id(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/** A number where the pages send one (STK and B2C result codes), the code as it is otherwise (`SFC_IC0003`). */
function numeric(code: string): number | string {
  return /^\d+$/.test(code) ? Number(code) : code;
}

/** The pages' error body with its documented HTTP status; `field` completes "Bad Request - Invalid <field>". */
function fail(res: ServerResponse, error: { status: number; errorCode: string; errorMessage: string }, field?: string): void {
  json(res, error.status, {
    requestId: id('rq'),
    errorCode: error.errorCode,
    errorMessage: field ? `${error.errorMessage} ${field}` : error.errorMessage,
  });
}

const text = (value: unknown, min: number, max: number) => typeof value === 'string' && value.length >= min && value.length <= max;
const digits = (value: unknown, pattern: RegExp) => (typeof value === 'string' || typeof value === 'number') && pattern.test(String(value));
const url = (value: unknown) => typeof value === 'string' && /^https?:\/\/\S+$/.test(value);
const wholeAmount = (value: unknown) => digits(value, /^[1-9]\d*$/);
const optional = (value: unknown, check: (v: unknown) => boolean) => value === undefined || check(value);

/**
 * The first field a page's parameter table refuses in this body (its name, as Daraja's "Bad Request - Invalid X"
 * says), or null. Lengths and values are the tables': AccountReference ≤ 12 and TransactionDesc ≤ 13 (M-Pesa
 * Express), Remarks 2–100 and Occassion 1–100 (B2C), AccountReference ≤ 13 (B2B), identifier types 4 and 11.
 */
function invalidField(operation: DarajaOperation | 'STK_QUERY' | 'STATUS' | 'BALANCE', body: Record<string, any>): string | null {
  const checks: Record<string, (v: unknown) => boolean> = {};
  if (operation === 'STK_PUSH') {
    Object.assign(checks, {
      BusinessShortCode: (v: unknown) => digits(v, /^\d{5,7}$/),
      TransactionType: (v: unknown) => v === 'CustomerPayBillOnline' || v === 'CustomerBuyGoodsOnline',
      Amount: wholeAmount,
      PartyA: (v: unknown) => digits(v, /^2547\d{8}$|^2541\d{8}$/),
      PartyB: (v: unknown) => digits(v, /^\d{5,7}$/),
      PhoneNumber: (v: unknown) => digits(v, /^2547\d{8}$|^2541\d{8}$/),
      CallBackURL: url,
      AccountReference: (v: unknown) => text(v, 1, 12),
      TransactionDesc: (v: unknown) => optional(v, (d) => text(d, 1, 13)),
    });
  } else if (operation === 'STK_QUERY') {
    checks.CheckoutRequestID = (v) => text(v, 1, 100);
  } else if (operation === 'B2C') {
    Object.assign(checks, {
      OriginatorConversationID: (v: unknown) => text(v, 1, 100),
      InitiatorName: (v: unknown) => text(v, 1, 100),
      CommandID: (v: unknown) => ['BusinessPayment', 'SalaryPayment', 'PromotionPayment'].includes(String(v)),
      Amount: wholeAmount,
      PartyA: (v: unknown) => digits(v, /^\d{5,7}$/),
      PartyB: (v: unknown) => digits(v, /^2547\d{8}$|^2541\d{8}$/),
      Remarks: (v: unknown) => text(v, 2, 100),
      QueueTimeOutURL: url,
      ResultURL: url,
      Occassion: (v: unknown) => optional(v, (o) => text(o, 1, 100)),
    });
  } else if (operation === 'B2B') {
    Object.assign(checks, {
      Initiator: (v: unknown) => text(v, 1, 100),
      CommandID: (v: unknown) => v === 'BusinessPayBill' || v === 'BusinessBuyGoods',
      SenderIdentifierType: (v: unknown) => String(v) === '4',
      RecieverIdentifierType: (v: unknown) => String(v) === '4',
      Amount: wholeAmount,
      PartyA: (v: unknown) => digits(v, /^\d{5,7}$/),
      PartyB: (v: unknown) => digits(v, /^\d{5,7}$/),
      AccountReference: (v: unknown) => typeof v === 'string' && v.length <= 13,
      Requester: (v: unknown) => optional(v, (r) => digits(r, /^2547\d{8}$|^2541\d{8}$/)),
      Remarks: (v: unknown) => text(v, 1, 100),
      QueueTimeOutURL: url,
      ResultURL: url,
      Occassion: (v: unknown) => optional(v, (o) => text(o, 1, 100)),
    });
  } else if (operation === 'REVERSAL') {
    Object.assign(checks, {
      Initiator: (v: unknown) => text(v, 1, 100),
      CommandID: (v: unknown) => v === 'TransactionReversal',
      TransactionID: (v: unknown) => text(v, 1, 20),
      Amount: wholeAmount,
      ReceiverParty: (v: unknown) => digits(v, /^\d{5,7}$/),
      RecieverIdentifierType: (v: unknown) => String(v) === '11',
      Remarks: (v: unknown) => text(v, 2, 100),
      QueueTimeOutURL: url,
      ResultURL: url,
    });
  } else if (operation === 'STATUS') {
    if (body.TransactionID === undefined && body.OriginalConversationID === undefined) return 'TransactionID';
    Object.assign(checks, {
      Initiator: (v: unknown) => text(v, 1, 100),
      CommandID: (v: unknown) => v === 'TransactionStatusQuery',
      PartyA: (v: unknown) => digits(v, /^\d{5,12}$/),
      IdentifierType: (v: unknown) => ['1', '2', '4'].includes(String(v)),
      ResultURL: url,
      QueueTimeOutURL: url,
      Remarks: (v: unknown) => text(v, 1, 100),
      Occasion: (v: unknown) => optional(v, (o) => text(o, 1, 100)),
    });
  }
  return Object.entries(checks).find(([name, check]) => !check(body[name]))?.[0] ?? null;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** POSTs a callback as Daraja does (no retry); answers the HTTP status, 0 when unreachable. */
async function post(url: string, body: unknown): Promise<number> {
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await response.text();
    return response.status;
  } catch {
    return 0;
  }
}
