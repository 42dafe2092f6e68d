import { createPrivateKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';

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

const PATHS: Record<string, DarajaOperation | 'STK_QUERY' | 'STATUS' | 'BALANCE'> = {
  '/mpesa/stkpush/v1/processrequest': 'STK_PUSH',
  '/mpesa/stkpushquery/v1/query': 'STK_QUERY',
  '/mpesa/b2c/v3/paymentrequest': 'B2C',
  '/mpesa/b2b/v1/paymentrequest': 'B2B',
  '/mpesa/reversal/v1/request': 'REVERSAL',
  '/mpesa/transactionstatus/v1/query': 'STATUS',
  '/mpesa/accountbalance/v1/query': 'BALANCE',
};

/**
 * Safaricom Daraja played locally from its documented payloads: OAuth tokens, STK push and query, B2C, B2B,
 * reversal, transaction status and balance, each checking the credentials our adapter must send (bearer token, STK
 * password, SecurityCredential decrypted with the certificate's key), and calling back as planned: on time, late,
 * twice, never, or by queue time-out. It counts every API call so tests can prove a request was never sent twice.
 */
export class DarajaStub {
  readonly calls: { operation: string; body: Record<string, any>; at: number }[] = [];
  readonly transactions: StubTransaction[] = [];
  /** Every callback the stub posted, with the status our server answered (0: unreachable). */
  readonly delivered: { url: string; status: number }[] = [];
  tokensIssued = 0;
  /** Seconds a token lives; Daraja sends it as a string on some deployments. */
  tokenSeconds: string | number = '3599';
  /** The plan of each request; tests replace it. */
  plan: (operation: DarajaOperation, body: Record<string, any>) => DarajaPlan = () => ({});
  /** False: transaction status queries are taken but their results never come (M-Pesa's result queue is down). */
  answersStatusQueries = true;
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
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const url = new URL(req.url ?? '/', this.baseUrl);
    if (url.pathname === '/oauth/v1/generate') return this.token(req, res);
    const operation = PATHS[url.pathname];
    if (!operation) return json(res, 404, { errorCode: '404.001.01', errorMessage: 'Resource not found' });
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!this.tokens.has(bearer)) return json(res, 401, { errorCode: '404.001.03', errorMessage: 'Invalid Access Token' });
    let body: Record<string, any>;
    try {
      body = JSON.parse(raw);
    } catch {
      return json(res, 400, { errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid JSON' });
    }
    this.calls.push({ operation, body, at: Date.now() });
    if (operation === 'STK_PUSH' || operation === 'STK_QUERY') {
      if (!this.stkPasswordValid(body)) return json(res, 400, { errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid Password' });
    } else if (!this.credentialValid(body.SecurityCredential)) {
      return json(res, 400, { errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid SecurityCredential' });
    }
    if (operation === 'STK_QUERY') return this.stkQuery(res, body);
    if (operation === 'STATUS') return this.statusQuery(res, body);
    if (operation === 'BALANCE') {
      json(res, 200, {
        ConversationID: id('AG'),
        OriginatorConversationID: id('OC'),
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      });
      return;
    }
    this.transaction(res, operation, body);
  }

  private token(req: IncomingMessage, res: ServerResponse): void {
    const expected = Buffer.from(`${STUB_CREDENTIALS.MPESA_CONSUMER_KEY}:${STUB_CREDENTIALS.MPESA_CONSUMER_SECRET}`).toString('base64');
    if (req.headers.authorization !== `Basic ${expected}`) {
      return json(res, 400, { errorCode: '400.008.01', errorMessage: 'Invalid Authentication passed' });
    }
    const token = randomBytes(12).toString('hex');
    this.tokens.add(token);
    this.tokensIssued += 1;
    json(res, 200, { access_token: token, expires_in: this.tokenSeconds });
  }

  private transaction(res: ServerResponse, operation: DarajaOperation, body: Record<string, any>): void {
    if (operation === 'B2C' && this.transactions.some((t) => t.originatorConversationId === body.OriginatorConversationID)) {
      return json(res, 400, { errorCode: '400.002.05', errorMessage: 'Duplicate OriginatorConversationID' });
    }
    const plan = {
      fault: 'none',
      taken: true,
      resultCode: '0',
      callback: 'once',
      delayMs: 0,
      ...this.plan(operation, body),
    } as Required<DarajaPlan>;
    if (plan.fault === 'busy') return json(res, 500, { errorCode: '500.003.02', errorMessage: 'Spike arrest violation' });
    if (plan.fault === 'refuse') return json(res, 400, { errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid PhoneNumber' });
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
        MerchantRequestID: transaction.merchantRequestId,
        CheckoutRequestID: transaction.checkoutRequestId,
        ResponseCode: '0',
        ResponseDescription: 'Success. Request accepted for processing',
        CustomerMessage: 'Success. Request accepted for processing',
      });
    }
    json(res, 200, {
      ConversationID: transaction.conversationId,
      OriginatorConversationID: transaction.originatorConversationId,
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
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

  resultOf(t: StubTransaction): Record<string, unknown> {
    if (t.operation === 'STK_PUSH') {
      const ok = t.resultCode === '0';
      return {
        Body: {
          stkCallback: {
            MerchantRequestID: t.merchantRequestId,
            CheckoutRequestID: t.checkoutRequestId,
            ResultCode: Number(t.resultCode),
            ResultDesc: ok ? 'The service request is processed successfully.' : `Result ${t.resultCode}`,
            ...(ok
              ? {
                  CallbackMetadata: {
                    Item: [
                      { Name: 'Amount', Value: t.body.Amount },
                      { Name: 'MpesaReceiptNumber', Value: t.receipt },
                      { Name: 'TransactionDate', Value: 20261125101010 },
                      { Name: 'PhoneNumber', Value: Number(t.body.PhoneNumber) },
                    ],
                  },
                }
              : {}),
          },
        },
      };
    }
    const ok = t.resultCode === '0';
    return {
      Result: {
        ResultType: 0,
        ResultCode: Number.isNaN(Number(t.resultCode)) ? t.resultCode : Number(t.resultCode),
        ResultDesc: ok ? 'The service request is processed successfully.' : `Result ${t.resultCode}`,
        OriginatorConversationID: t.originatorConversationId,
        ConversationID: t.conversationId,
        TransactionID: ok ? t.receipt : 'NONE',
        ...(ok
          ? {
              ResultParameters: {
                ResultParameter: [
                  { Key: 'TransactionAmount', Value: t.body.Amount },
                  { Key: 'TransactionReceipt', Value: t.receipt },
                  { Key: 'TransactionCompletedDateTime', Value: '25.11.2026 10:10:10' },
                ],
              },
            }
          : {}),
        ReferenceData: { ReferenceItem: { Key: 'QueueTimeoutURL', Value: t.body.QueueTimeOutURL } },
      },
    };
  }

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
    if (!t) return json(res, 500, { errorCode: '500.001.1001', errorMessage: 'The transaction is being processed' });
    json(res, 200, {
      ResponseCode: '0',
      ResponseDescription: 'The service request has been accepted successsfully',
      MerchantRequestID: t.merchantRequestId,
      CheckoutRequestID: t.checkoutRequestId,
      ResultCode: t.resultCode,
      ResultDesc: t.resultCode === '0' ? 'The service request is processed successfully.' : `Result ${t.resultCode}`,
    });
  }

  /** Answers at once, then posts the transaction's status to the query's ResultURL, as Daraja does. */
  private statusQuery(res: ServerResponse, body: Record<string, any>): void {
    const t = this.transactions.find(
      (candidate) => candidate.originatorConversationId === body.OriginalConversationID || candidate.receipt === body.TransactionID,
    );
    json(res, 200, {
      ConversationID: id('AG'),
      OriginatorConversationID: id('OC'),
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    });
    const result = t
      ? {
          ResultType: 0,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          OriginatorConversationID: id('OC'),
          ConversationID: id('AG'),
          TransactionID: id('TS'),
          ResultParameters: {
            ResultParameter: [
              { Key: 'ReceiptNo', Value: t.resultCode === '0' ? t.receipt : '' },
              { Key: 'TransactionStatus', Value: t.resultCode === '0' ? 'Completed' : 'Failed' },
              { Key: 'Amount', Value: t.body.Amount },
            ],
          },
        }
      : {
          ResultType: 0,
          ResultCode: 'R000002',
          ResultDesc: 'The OriginatorConversationID is invalid.',
          OriginatorConversationID: id('OC'),
          ConversationID: id('AG'),
          TransactionID: 'NONE',
        };
    if (this.answersStatusQueries) this.later(5, () => this.post(body.ResultURL, { Result: result }));
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
