import Decimal from 'decimal.js';
import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * How the stub answers one send call: normally, or a fault. `http500` and `timeout` take the top-ups first unless
 * `taken` is false; `unauthorized` (401) and `busy` (503) take nothing; `refuse` is a 400 with a reason.
 */
export interface AfricasTalkingCallPlan {
  fault?: 'none' | 'http500' | 'timeout' | 'unauthorized' | 'busy' | 'refuse';
  taken?: boolean;
}

/**
 * How the stub treats one number of a send: its status in the send's answer, its final status, and how that is
 * posted to the status callback URL: once, twice, never, first its final status and then the opposite one
 * (`contradicting`), `delayMs` after the usual moment past the send's answer; or before the send is answered (`early`).
 */
export interface AfricasTalkingRecipientPlan {
  sent?: 'Sent' | 'Failed';
  final?: 'Success' | 'Failed';
  callback?: 'once' | 'twice' | 'never' | 'contradicting' | 'early';
  delayMs?: number;
}

export interface AfricasTalkingTopUp {
  requestId: string;
  phoneNumber: string;
  amount: string;
  sent: 'Sent' | 'Failed';
  final: 'Success' | 'Failed';
  /** When the top-up reaches its final status (its callback's time); query/transaction/find says Pending before. */
  finalAt: number;
  plan: AfricasTalkingRecipientPlan;
}

/**
 * Africa's Talking's airtime API played locally from its documented payloads: the form-encoded send (apiKey header
 * and username checked, `recipients` as JSON, the Idempotency-Key honoured), query/transaction/find, and status
 * callbacks posted to `statusCallbackUrl` (form-encoded, or JSON) as planned. Every send call is counted, so tests
 * prove a top-up was never sent twice.
 */
export class AfricasTalkingStub {
  static readonly CREDENTIALS = { AFRICASTALKING_USERNAME: 'paygate', AFRICASTALKING_API_KEY: 'atsk_stub_0123456789abcdef' };

  readonly sends: { idempotencyKey: string; recipients: { phoneNumber: string; amount: string }[] }[] = [];
  readonly finds: string[] = [];
  readonly topUps: AfricasTalkingTopUp[] = [];
  /** Every callback the stub posted, with the status our server answered (0: unreachable). */
  readonly delivered: { body: Record<string, string>; status: number }[] = [];
  callPlan: (recipients: { phoneNumber: string; amount: string }[]) => AfricasTalkingCallPlan = () => ({});
  /** The plan for a number, as Africa's Talking writes it (+254…). */
  plan: (phoneNumber: string) => AfricasTalkingRecipientPlan = () => ({});
  statusCallbackUrl = '';
  callbackEncoding: 'form' | 'json' = 'form';
  private readonly keys = new Set<string>();
  private readonly pending = new Set<NodeJS.Timeout>();
  private server!: Server;
  baseUrl = '';

  env(): Record<string, string> {
    return { RAIL_AIRTIME: 'africastalking', AFRICASTALKING_BASE_URL: this.baseUrl, ...AfricasTalkingStub.CREDENTIALS };
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => void this.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** How many send calls carried this number. */
  sentTo(phoneNumber: string): number {
    const digits = phoneNumber.replace(/\D/g, '');
    return this.sends.flatMap((s) => s.recipients).filter((r) => r.phoneNumber.replace(/\D/g, '') === digits).length;
  }

  topUpOf(phoneNumber: string): AfricasTalkingTopUp | undefined {
    const digits = phoneNumber.replace(/\D/g, '');
    return this.topUps.find((t) => t.phoneNumber.replace(/\D/g, '') === digits);
  }

  /** Posts a status callback now (for a forged or late one in tests). */
  postStatus(body: Record<string, string>): Promise<number> {
    return this.post(body);
  }

  statusOf(t: AfricasTalkingTopUp, status: 'Success' | 'Failed' = t.final): Record<string, string> {
    return {
      phoneNumber: t.phoneNumber,
      description: status === 'Success' ? 'Airtime Delivered Successfully' : 'Airtime could not be delivered',
      status,
      requestId: t.requestId,
      discount: 'KES 0.6000',
      value: t.amount,
    };
  }

  async close(): Promise<void> {
    for (const timer of this.pending) clearTimeout(timer);
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    if (req.headers.apikey !== AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_API_KEY) {
      return text(res, 401, 'The supplied authentication is invalid');
    }
    if (req.method === 'GET' && url.pathname === '/query/transaction/find') return this.find(res, url.searchParams);
    if (req.method !== 'POST' || url.pathname !== '/version1/airtime/send') return text(res, 404, 'Not found');
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return text(res, 415, 'Unsupported');
    const form = new URLSearchParams(raw);
    if (form.get('username') !== AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME) return text(res, 401, 'Invalid username');
    const recipients = JSON.parse(form.get('recipients') ?? '[]') as { phoneNumber: string; amount: string }[];
    const idempotencyKey = String(req.headers['idempotency-key'] ?? '');
    this.sends.push({ idempotencyKey, recipients });
    const plan = { fault: 'none', taken: true, ...this.callPlan(recipients) } as Required<AfricasTalkingCallPlan>;
    if (plan.fault === 'unauthorized') return text(res, 401, 'The supplied authentication is invalid');
    if (plan.fault === 'busy') return text(res, 503, 'Service Unavailable');
    if (plan.fault === 'refuse') return text(res, 400, 'Invalid amount: the value must be within the allowed range');
    if (idempotencyKey && this.keys.has(idempotencyKey)) {
      return json(res, 201, {
        errorMessage: 'A duplicate request was received within the last 5 minutes',
        numSent: 0,
        totalAmount: '0',
        totalDiscount: '0',
        responses: [],
      });
    }
    if (!plan.taken) return plan.fault === 'http500' ? text(res, 500, 'Internal Server Error') : undefined;
    if (idempotencyKey) this.keys.add(idempotencyKey);
    const taken = recipients.map((r) => this.take(r));
    const early = taken.filter((t) => t.plan.callback === 'early' && t.sent === 'Sent');
    await Promise.all(early.map((t) => this.post(this.statusOf(t))));
    for (const t of taken.filter((x) => x.sent === 'Sent' && x.plan.callback !== 'early')) this.scheduleStatus(t);
    if (plan.fault === 'http500') return text(res, 500, 'Internal Server Error');
    if (plan.fault === 'timeout') return;
    const sent = taken.filter((t) => t.sent === 'Sent');
    json(res, 201, {
      errorMessage: 'None',
      numSent: sent.length,
      totalAmount: `KES ${sent.reduce((total, t) => total.plus(t.amount.split(' ')[1]), new Decimal(0)).toFixed(4)}`,
      totalDiscount: 'KES 0.0000',
      responses: taken.map((t) => ({
        phoneNumber: t.phoneNumber,
        errorMessage: t.sent === 'Failed' ? 'Invalid phone number' : 'None',
        amount: t.amount,
        status: t.sent,
        requestId: t.sent === 'Sent' ? t.requestId : 'None',
        discount: 'KES 0.6000',
      })),
    });
  }

  private take(recipient: { phoneNumber: string; amount: string }): AfricasTalkingTopUp {
    const phoneNumber = recipient.phoneNumber.startsWith('+') ? recipient.phoneNumber : `+${recipient.phoneNumber}`;
    const plan = { sent: 'Sent', final: 'Success', callback: 'once', ...this.plan(phoneNumber) } as AfricasTalkingRecipientPlan;
    const [currency, value] = recipient.amount.split(' ');
    const t: AfricasTalkingTopUp = {
      requestId: `ATQid_${randomBytes(16).toString('hex')}`,
      phoneNumber,
      // Africa's Talking writes amounts back with four decimals.
      amount: `${currency} ${new Decimal(value).toFixed(4)}`,
      sent: plan.sent!,
      final: plan.sent === 'Failed' ? 'Failed' : plan.final!,
      finalAt: Date.now() + STATUS_AFTER_MS + (plan.delayMs ?? 0),
      plan,
    };
    this.topUps.push(t);
    return t;
  }

  private find(res: ServerResponse, query: URLSearchParams): void {
    const transactionId = query.get('transactionId') ?? '';
    this.finds.push(transactionId);
    if (query.get('username') !== AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME) return text(res, 401, 'Invalid username');
    const t = this.topUps.find((candidate) => candidate.requestId === transactionId);
    if (!t) return json(res, 200, { status: 'Failed', errorMessage: 'Could not find transaction' });
    json(res, 200, {
      status: 'Success',
      data: {
        requestMetadata: {},
        sourceType: 'Wallet',
        source: 'PaymentWallet',
        destinationType: 'PhoneNumber',
        destination: t.phoneNumber,
        value: t.amount,
        transactionId: t.requestId,
        category: 'Airtime',
        provider: 'Airtime',
        status: Date.now() >= t.finalAt ? t.final : 'Pending',
        description: t.final === 'Success' ? 'Airtime Delivered Successfully' : 'Airtime could not be delivered',
        transactionDate: new Date().toISOString(),
      },
    });
  }

  private scheduleStatus(t: AfricasTalkingTopUp): void {
    const { callback } = t.plan;
    const delayMs = STATUS_AFTER_MS + (t.plan.delayMs ?? 0);
    if (callback === 'never') return;
    this.later(delayMs, () => this.post(this.statusOf(t)));
    if (callback === 'twice') this.later(delayMs + 20, () => this.post(this.statusOf(t)));
    if (callback === 'contradicting') {
      this.later(delayMs + 20, () => this.post(this.statusOf(t, t.final === 'Success' ? 'Failed' : 'Success')));
    }
  }

  private later(delayMs: number, run: () => Promise<unknown>): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      void run();
    }, delayMs);
    this.pending.add(timer);
  }

  private async post(body: Record<string, string>): Promise<number> {
    let status: number;
    try {
      const response = await fetch(this.statusCallbackUrl, {
        method: 'POST',
        headers: { 'content-type': this.callbackEncoding === 'json' ? 'application/json' : 'application/x-www-form-urlencoded' },
        body: this.callbackEncoding === 'json' ? JSON.stringify(body) : new URLSearchParams(body).toString(),
      });
      status = response.status;
    } catch {
      status = 0;
    }
    this.delivered.push({ body, status });
    return status;
  }
}

/** A final status comes a moment after the send is answered (so a test's callbacks do not race its answer). */
const STATUS_AFTER_MS = 200;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
}
