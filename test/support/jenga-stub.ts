import { createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How the stub treats one transfer: how the call answers, and the transfer's status then and when asked later. */
export interface JengaPlan {
  fault?: 'none' | 'busy' | 'http500' | 'timeout' | 'refuse';
  taken?: boolean;
  status?: 'SUCCESS' | 'FAILED' | 'PENDING';
  /** What a status query answers after the first answer (a PENDING transfer settles later). */
  laterStatus?: 'SUCCESS' | 'FAILED';
}

export interface JengaTransfer {
  body: Record<string, any>;
  transactionId: string;
  status: string;
  laterStatus: string;
}

/**
 * Equity's Jenga played locally from its documented payloads: the merchant token, PesaLink transfers (the
 * `signature` header verified with the public key of the key pair it makes for the test) and the transaction-details
 * query. Every transfer call is counted, so tests prove a transfer was never sent twice.
 */
export class JengaStub {
  readonly calls: { path: string; body: Record<string, any> | null }[] = [];
  readonly transfers: JengaTransfer[] = [];
  /** References sent again after Jenga took them (refused as duplicates): a transfer we sent twice. */
  readonly duplicates: string[] = [];
  plan: (body: Record<string, any>) => JengaPlan = () => ({});
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

  sent(reference: string): number {
    return this.calls.filter((call) => call.body?.transfer?.reference === reference).length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const body = raw ? (JSON.parse(raw) as Record<string, any>) : null;
    if (url.pathname === '/authentication/api/v3/authenticate/merchant') {
      const ok =
        req.headers['api-key'] === JengaStub.CREDENTIALS.JENGA_API_KEY &&
        body?.merchantCode === JengaStub.CREDENTIALS.JENGA_MERCHANT_CODE &&
        body?.consumerSecret === JengaStub.CREDENTIALS.JENGA_CONSUMER_SECRET;
      if (!ok) return json(res, 401, { status: false, code: 401, message: 'Invalid credentials' });
      const token = randomBytes(12).toString('hex');
      this.tokens.add(token);
      return json(res, 200, {
        accessToken: token,
        refreshToken: 'r',
        expiresIn: new Date(Date.now() + 15 * 60_000).toISOString(),
        tokenType: 'Bearer',
      });
    }
    if (!this.tokens.has((req.headers.authorization ?? '').replace(/^Bearer /, '')))
      return json(res, 401, { status: false, code: 401, message: 'Unauthorized' });
    this.calls.push({ path: url.pathname, body });
    if (url.pathname === '/v3-apis/transaction-api/v3.0/remittance/pesalinkacc') return this.transfer(req, res, body!);
    const details = url.pathname.match(/^\/v3-apis\/transaction-api\/v3\.0\/transactions\/details\/(\w+)$/);
    if (details) {
      const t = this.transfers.find((candidate) => candidate.body.transfer.reference === details[1]);
      if (!t) return json(res, 404, { status: false, code: 404, message: 'Transaction not found' });
      return json(res, 200, {
        status: true,
        code: 0,
        message: 'success',
        data: { transactionId: t.transactionId, status: t.laterStatus, reference: details[1] },
      });
    }
    json(res, 404, { status: false, code: 404, message: 'not found' });
  }

  private transfer(req: IncomingMessage, res: ServerResponse, body: Record<string, any>): void {
    const signed = `${body.transfer.amount}${body.transfer.currencyCode}${body.transfer.reference}${body.destination.name}${body.source.accountNumber}`;
    const valid = createVerify('RSA-SHA256')
      .update(signed)
      .verify(this.publicKey, String(req.headers.signature ?? ''), 'base64');
    if (!valid) return json(res, 400, { status: false, code: 400102, message: 'Invalid signature' });
    if (this.transfers.some((t) => t.body.transfer.reference === body.transfer.reference)) {
      this.duplicates.push(body.transfer.reference);
      return json(res, 409, { status: false, code: 409, message: 'Duplicate transaction reference' });
    }
    const plan = { fault: 'none', taken: true, status: 'SUCCESS', ...this.plan(body) } as Required<JengaPlan> & JengaPlan;
    if (plan.fault === 'busy') return json(res, 503, { status: false, code: 503, message: 'Service temporarily unavailable' });
    if (plan.fault === 'refuse') return json(res, 400, { status: false, code: 111013, message: 'Invalid destination account' });
    if (!plan.taken) return plan.fault === 'http500' ? void res.writeHead(500).end('error') : undefined;
    const transfer: JengaTransfer = {
      body,
      transactionId: `PL${randomBytes(5).toString('hex').toUpperCase()}`,
      status: plan.status,
      laterStatus: plan.laterStatus ?? (plan.status === 'PENDING' ? 'SUCCESS' : plan.status),
    };
    this.transfers.push(transfer);
    if (plan.fault === 'http500') return void res.writeHead(500).end('error');
    if (plan.fault === 'timeout') return;
    json(res, 200, { status: true, code: 0, message: 'success', data: { transactionId: transfer.transactionId, status: transfer.status } });
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
