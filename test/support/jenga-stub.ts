import { createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeServer } from './gateway-fixtures';

/**
 * Jenga's documented pages (developer.jengahq.io) this stub plays:
 * - "Generate Token" (Developer Quickstart, merchant authentication):
 *   POST /authentication/api/v3/authenticate/merchant
 * - "PesaLink - Send to Bank Account": POST /v3-apis/transaction-api/v3.0/remittance/pesalinkacc
 * - "Query Transaction Details": GET /v3-apis/transaction-api/v3.0/transactions/details/{ref}
 * - "Account Full Statement": POST /v3-apis/account-api/v3.0/accounts/fullstatement, signed over accountNumber +
 *   countryCode + toDate; `limit` rows a page, the next page asked with the last row's date, reference, serial,
 *   postedDateTime and runningBalance.
 * - "Account Balance": GET /v3-apis/account-api/v3.0/accounts/balances/{countryCode}/{accountId}, signed over
 *   countryCode + accountId; `data.balances` with the Current and Available amounts.
 * - "Generate Signature": base64 RSA-SHA256 (PKCS#1 v1.5) with the merchant's private key over each call's fields,
 *   in the `Signature` header.
 */
export const JENGA_PATHS = {
  token: '/authentication/api/v3/authenticate/merchant',
  pesalink: '/v3-apis/transaction-api/v3.0/remittance/pesalinkacc',
  details: '/v3-apis/transaction-api/v3.0/transactions/details/',
  statement: '/v3-apis/account-api/v3.0/accounts/fullstatement',
  balance: '/v3-apis/account-api/v3.0/accounts/balances/',
} as const;

/** "Account Full Statement": one row as the page shows it (amount a number, Nairobi times without an offset). */
export const JENGA_STATEMENT_ROW = {
  date: '2022-01-01T00:00:00.000',
  reference: 'S8328845',
  description: 'EAZZY-FUNDS TRNSF TO A/C XXXXXXXXXXXX',
  amount: 100,
  serial: '1',
  postedDateTime: '2022-01-01T10:38:39',
  type: 'Debit',
  runningBalance: { currency: 'KES', amount: 9799.58 },
};
/** "Account Balance": the page's answer. */
export const JENGA_BALANCE_ANSWER = {
  status: true,
  code: 0,
  message: 'success',
  data: {
    balances: [
      { amount: '997382.57', type: 'Current' },
      { amount: '997382.57', type: 'Available' },
    ],
    currency: 'KES',
  },
};

/** "Query Transaction Details": each state word with its stateCode (2 successful, 1 failed, -1 awaiting the bank). */
export const JENGA_STATE_CODES: Record<string, number> = { Success: 2, Failed: 1, Pending: -1 };

/**
 * How the stub treats one transfer: how the send call answers, its `data.status` then, and what each status query
 * answers after (one state per query, the last repeating; a word outside JENGA_STATE_CODES goes out with stateCode 0).
 */
export interface JengaPlan {
  fault?: 'none' | 'busy' | 'http500' | 'timeout' | 'refuse';
  /** With a fault: whether Jenga took the transfer before the answer was lost (the default), or never saw it. */
  taken?: boolean;
  /** The send answer's `data.status`: the page's SUCCESS (paid at once) or PENDING (still processing), or another word. */
  status?: string;
  /** What the status queries answer, in order. Default: Success, or Pending then Success after a PENDING send. */
  states?: readonly string[];
}

export interface JengaTransfer {
  body: Record<string, any>;
  transactionId: string;
  status: string;
  states: readonly string[];
  /** Status queries answered about it so far. */
  queries: number;
}

/** The last state a transfer's queries answer: the bank's outcome. */
export const finalState = (transfer: JengaTransfer): string => transfer.states[transfer.states.length - 1];

/**
 * Equity's Jenga played locally from its documented requests and answers (pages above), never from our adapter:
 * every call is checked as documented (the `Api-Key` header and body of the token call, the bearer token and the
 * `Signature` verified with the public key of the key pair it makes for the test, over each call's documented
 * formula) and answered with the documented bodies, or fails as Jenga does (its error body `{status: false, code,
 * message}`, 503 when busy, a bare 500, no answer at all). Every call is kept, so tests prove a transfer was never
 * sent twice.
 */
export class JengaStub {
  readonly calls: { method: string; path: string; headers: IncomingHttpHeaders; body: Record<string, any> | null }[] = [];
  readonly transfers: JengaTransfer[] = [];
  /** References sent again after Jenga took them (refused as duplicates): a transfer we sent twice. */
  readonly duplicates: string[] = [];
  /** Calls refused for a missing or wrong signature: none is expected from our adapter. */
  readonly badSignatures: string[] = [];
  plan: (body: Record<string, any>) => JengaPlan = () => ({});
  /** The source account's statement rows, in order (tests add ours, duplicates, rows we never sent). */
  statementRows: Record<string, unknown>[] = [];
  /** A statement page (1-based) that fails: a bare 500, or no answer at all. */
  statementFaults = new Map<number, 'http500' | 'timeout'>();
  /** The Current balance the balance call answers, as written (a string on the page). */
  currentBalance: string | number = JENGA_BALANCE_ANSWER.data.balances[0].amount;
  readonly privateKeyPath: string;
  private readonly publicKey: string;
  private readonly tokens = new Set<string>();
  private server!: Server;
  baseUrl = '';

  static readonly CREDENTIALS = {
    JENGA_API_KEY: 'stub-api-key',
    JENGA_MERCHANT_CODE: '4445556667',
    JENGA_CONSUMER_SECRET: 'stub-jenga-secret',
    JENGA_SOURCE_ACCOUNT_NUMBER: '0011547896523',
    JENGA_SOURCE_ACCOUNT_NAME: 'Paygate Ltd',
  };

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    this.privateKeyPath = join(tmpdir(), `jenga-stub-${randomBytes(6).toString('hex')}.pem`);
    writeFileSync(this.privateKeyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  }

  /** The variables a server needs to use this stub as its bank rail. */
  env(): Record<string, string> {
    return { RAIL_BANK: 'jenga', JENGA_BASE_URL: this.baseUrl, JENGA_PRIVATE_KEY_PATH: this.privateKeyPath, ...JengaStub.CREDENTIALS };
  }

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

  /** Send calls carrying this transfer reference. */
  sent(reference: string): number {
    return this.calls.filter((call) => call.path === JENGA_PATHS.pesalink && call.body?.transfer?.reference === reference).length;
  }

  /** The transfer Jenga took under this reference. */
  transfer(reference: string): JengaTransfer | undefined {
    return this.transfers.find((t) => t.body.transfer.reference === reference);
  }

  async close(): Promise<void> {
    await closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const body = raw ? (JSON.parse(raw) as Record<string, any>) : null;
    this.calls.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, body });
    if (url.pathname === JENGA_PATHS.token && req.method === 'POST') return this.token(req, res, body);
    if (!this.tokens.has((req.headers.authorization ?? '').replace(/^Bearer /, '')))
      return json(res, 401, { status: false, code: 401, message: 'Unauthorized' });
    if (url.pathname === JENGA_PATHS.pesalink && req.method === 'POST') return this.pesalink(req, res, body);
    if (url.pathname === JENGA_PATHS.statement && req.method === 'POST') return this.statement(req, res, body ?? {});
    if (url.pathname.startsWith(JENGA_PATHS.balance) && req.method === 'GET') return this.balance(req, res, url.pathname);
    if (url.pathname.startsWith(JENGA_PATHS.details) && req.method === 'GET')
      return this.details(req, res, decodeURIComponent(url.pathname.slice(JENGA_PATHS.details.length)));
    json(res, 404, { status: false, code: 404, message: 'Resource not found' });
  }

  /** "Generate Token": `Api-Key` header, JSON `{merchantCode, consumerSecret}`; answers the token and its expiry date. */
  private token(req: IncomingMessage, res: ServerResponse, body: Record<string, any> | null): void {
    const ok =
      req.headers['api-key'] === JengaStub.CREDENTIALS.JENGA_API_KEY &&
      String(req.headers['content-type']).startsWith('application/json') &&
      body?.merchantCode === JengaStub.CREDENTIALS.JENGA_MERCHANT_CODE &&
      body?.consumerSecret === JengaStub.CREDENTIALS.JENGA_CONSUMER_SECRET;
    if (!ok) return json(res, 401, { status: false, code: 401, message: 'Invalid credentials' });
    const token = randomBytes(24).toString('base64url');
    this.tokens.add(token);
    const now = Date.now();
    json(res, 200, {
      accessToken: token,
      refreshToken: randomBytes(12).toString('base64'),
      expiresIn: new Date(now + 15 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      issuedAt: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      tokenType: 'Bearer',
    });
  }

  /**
   * "Account Full Statement": the rows from the one after the cursor (the last row of the previous page, matched by
   * reference and serial) on, `limit` of them.
   */
  private statement(req: IncomingMessage, res: ServerResponse, body: Record<string, any>): void {
    if (!this.signed(req, res, [body.accountNumber, body.countryCode, body.toDate])) return;
    if (body.accountNumber !== JengaStub.CREDENTIALS.JENGA_SOURCE_ACCOUNT_NUMBER || body.countryCode !== 'KE')
      return json(res, 400, { status: false, code: 400, message: 'Invalid account' });
    if (!/^\d{4}-\d{2}-\d{2}$/.test(String(body.fromDate)) || !/^\d{4}-\d{2}-\d{2}$/.test(String(body.toDate)) || !(Number(body.limit) > 0))
      return json(res, 400, { status: false, code: 400, message: 'Invalid request' });
    const start = body.reference
      ? this.statementRows.findIndex((row) => row.reference === body.reference && row.serial === body.serial) + 1
      : 0;
    const page = Math.floor(start / Number(body.limit)) + 1;
    const fault = this.statementFaults.get(page);
    if (fault === 'http500') return void res.writeHead(500).end('Internal Server Error');
    if (fault === 'timeout') return;
    const transactions = this.statementRows.slice(start, start + Number(body.limit));
    // Amounts go out as the page writes them: JSON numbers, written here from their text so none is rounded.
    const text = JSON.stringify({
      status: true,
      code: 0,
      message: 'success',
      data: { balance: 0, currency: 'KES', accountNumber: body.accountNumber, transactions },
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(text.replace(/"@num:([-\d.]+)"/g, '$1'));
  }

  /** "Account Balance": signed over countryCode + accountId. */
  private balance(req: IncomingMessage, res: ServerResponse, path: string): void {
    const [country, account] = path.slice(JENGA_PATHS.balance.length).split('/').map(decodeURIComponent);
    if (!this.signed(req, res, [country, account])) return;
    if (account !== JengaStub.CREDENTIALS.JENGA_SOURCE_ACCOUNT_NUMBER)
      return json(res, 404, { status: false, code: 404, message: 'Account not found' });
    const balances = JENGA_BALANCE_ANSWER.data.balances.map((b) => ({ ...b, amount: this.currentBalance }));
    json(res, 200, { ...JENGA_BALANCE_ANSWER, data: { ...JENGA_BALANCE_ANSWER.data, balances } });
  }

  /** Whether the `Signature` header verifies over the documented concatenation; refused as Jenga does when not. */
  private signed(req: IncomingMessage, res: ServerResponse, fields: unknown[]): boolean {
    const valid = createVerify('RSA-SHA256')
      .update(fields.map(String).join(''))
      .verify(this.publicKey, String(req.headers.signature ?? ''), 'base64');
    if (!valid) {
      this.badSignatures.push(`${req.method} ${req.url}`);
      json(res, 400, { status: false, code: 900100, message: 'Invalid signature' });
    }
    return valid;
  }

  /** "PesaLink - Send to Bank Account": signed over amount, currency, reference, recipient name, source account. */
  private pesalink(req: IncomingMessage, res: ServerResponse, body: Record<string, any> | null): void {
    const { source, destination, transfer } = body ?? {};
    if (!source || !destination || !transfer) return json(res, 400, { status: false, code: 400, message: 'Bad request' });
    if (!this.signed(req, res, [transfer.amount, transfer.currencyCode, transfer.reference, destination.name, source.accountNumber]))
      return;
    if (this.transfer(transfer.reference)) {
      this.duplicates.push(transfer.reference);
      return json(res, 409, { status: false, code: 409, message: 'Duplicate transaction reference' });
    }
    const plan: JengaPlan = { fault: 'none', taken: true, status: 'SUCCESS', ...this.plan(body!) };
    if (plan.fault === 'busy') return json(res, 503, { status: false, code: 503, message: 'Service temporarily unavailable' });
    if (plan.fault === 'refuse') return json(res, 400, { status: false, code: 111013, message: 'Invalid destination account' });
    if (!plan.taken) return plan.fault === 'http500' ? void res.writeHead(500).end('error') : undefined;
    const taken: JengaTransfer = {
      body: body!,
      transactionId: String(10_000_000_000_000 + this.transfers.length),
      status: plan.status!,
      states: plan.states ?? (plan.status === 'PENDING' ? ['Pending', 'Success'] : ['Success']),
      queries: 0,
    };
    this.transfers.push(taken);
    if (plan.fault === 'http500') return void res.writeHead(500).end('error');
    if (plan.fault === 'timeout') return;
    json(res, 200, {
      status: true,
      code: 0,
      message: 'success',
      reference: transfer.reference,
      data: { transactionId: taken.transactionId, status: taken.status },
    });
  }

  /** "Query Transaction Details": signed over the reference; `data.state` with its `stateCode`. */
  private details(req: IncomingMessage, res: ServerResponse, reference: string): void {
    if (!this.signed(req, res, [reference])) return;
    const taken = this.transfer(reference);
    if (!taken) return json(res, 404, { status: false, code: 404, message: 'Transaction not found' });
    const state = taken.states[Math.min(taken.queries, taken.states.length - 1)];
    taken.queries += 1;
    json(res, 200, {
      status: true,
      code: 0,
      message: 'success',
      data: {
        state,
        stateCode: JENGA_STATE_CODES[state] ?? 0,
        code: state === 'Failed' ? 111013 : 0,
        message: state === 'Failed' ? 'Transaction failed' : 'Transaction processed',
        amount: Number(taken.body.transfer.amount),
        charge: 0,
        transactionReference: taken.transactionId,
      },
    });
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
