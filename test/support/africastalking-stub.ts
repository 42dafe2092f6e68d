import Decimal from 'decimal.js';
import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { closeServer } from './gateway-fixtures';

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
  /** Why a number is refused at send (`sent: 'Failed'`; its requestId is then "None"). */
  errorMessage?: string;
  /** This top-up's callbacks: the documented two fields or the fuller form (the stub's `callbackShape` otherwise). */
  callbackShape?: 'documented' | 'full';
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
  /** The Idempotency-Key of the call that took it, and that call's place among all send calls. */
  idempotencyKey: string;
  call: number;
}

/**
 * Africa's Talking's documented examples, each with its page. Numbers keep the documents' placeholders where only
 * the shape matters; fixtures that go through our number matching put digits in their place.
 */
export const DOCUMENTED = {
  /** docs.africastalking.com/airtime/sending ("Send Airtime"): the form body's recipients. */
  sendRecipients: '[{"phoneNumber":"+254711XXXYYY","amount":"KES X"}]',
  /**
   * Help centre, "What is the flow for an airtime request?" (help.africastalking.com/en/articles/6151516): the
   * send's answer (HTTP 201).
   */
  sendAnswer: {
    errorMessage: 'None',
    numSent: 1,
    totalAmount: 'KES 1000.0000',
    totalDiscount: 'KES 40.0000',
    responses: [
      {
        phoneNumber: '+254711XXXYYY',
        errorMessage: 'None',
        amount: 'KES 1000.0000',
        status: 'Sent',
        requestId: 'ATQid_1be914ac47845eef1a1dab5d89ec50ff',
        discount: 'KES 40.0000',
      },
    ],
  },
  /** Provider spec rails.md from the send's documentation: a number refused at send has requestId "None". */
  sendRefusedNumber: {
    phoneNumber: '+254711XXXYYY',
    errorMessage: 'Invalid phone number',
    amount: 'KES 1000.0000',
    status: 'Failed',
    requestId: 'None',
    discount: 'KES 0.0000',
  },
  /** The same key again within its window (the answer Africa's Talking's SDK users meet, HTTP 201). */
  sendDuplicate: {
    errorMessage: 'A duplicate request was received within the last 5 minutes',
    numSent: 0,
    totalAmount: '0',
    totalDiscount: '0',
    responses: [],
  },
  /**
   * docs.africastalking.com/airtime/statuscallback (and /airtime/callback): the status notification's two
   * parameters, POSTed form-encoded.
   */
  statusCallback: { requestId: 'ATQid_SampleTxnId123', status: 'Success' },
  /** Help centre, "What is the flow for an airtime request?": the fuller callback, as JSON. */
  statusCallbackFull: {
    phoneNumber: '+254711XXXYYY',
    description: 'Airtime Delivered Successfully',
    status: 'Success',
    requestId: 'ATQid_SampleTxnId123',
    discount: 'KES 0.6000',
    value: 'KES 100.0000',
  },
  /**
   * docs.africastalking.com/query/findtransaction ("Query Find Transaction"): GET with username and transactionId;
   * the answer's status says whether it was found (Success | Failed), data holds the transaction's fields as the
   * page lists them.
   */
  findAnswer: {
    status: 'Success',
    data: {
      requestMetadata: {},
      sourceType: 'Wallet',
      source: 'PaymentWallet',
      destinationType: 'PhoneNumber',
      destination: '+254711XXXYYY',
      value: 'KES 100.0000',
      transactionId: 'ATQid_SampleTxnId123',
      category: 'Airtime',
      provider: 'Airtime',
      description: 'Airtime Delivered Successfully',
      status: 'Success',
      transactionDate: '2026-11-27T10:00:00.000Z',
    },
  },
  /** docs.africastalking.com "Application Data": GET /version1/user?username=…; UserData.balance as "<currency> <amount>". */
  applicationData: { UserData: { balance: 'KES 1785.50' } },
  /** The same page: a transaction it does not find. */
  findNotFound: { status: 'Failed', errorMessage: 'Could not find transaction' },
};

/** Africa's Talking answers a repeat of an Idempotency-Key within this long as a duplicate ("…within the last 5 minutes"). */
export const IDEMPOTENCY_WINDOW_MS = 5 * 60_000;

/**
 * Africa's Talking's airtime API played locally from its documented payloads (africastalking-fixtures.ts names the
 * pages): the form-encoded send (apiKey header and username checked, `recipients` as JSON, each number in the
 * international form its SDK requires and each amount "<currency> <decimal>", refused per number otherwise with
 * requestId "None"; the Idempotency-Key remembered for 5 minutes), query/transaction/find, and status callbacks
 * posted to `statusCallbackUrl` as planned: the API reference's two fields, form-encoded, by default, or the help
 * centre's fuller JSON. Every send call is counted, so tests prove a top-up was never sent twice.
 */
export class AfricasTalkingStub {
  static readonly CREDENTIALS = { AFRICASTALKING_USERNAME: 'paygate', AFRICASTALKING_API_KEY: 'atsk_stub_0123456789abcdef' };

  readonly sends: { idempotencyKey: string; recipients: { phoneNumber: string; amount: string }[] }[] = [];
  readonly finds: string[] = [];
  /** Every request as it came: method, path, headers and the form or query fields. */
  readonly received: { method: string; path: string; headers: IncomingMessage['headers']; fields: Record<string, string> }[] = [];
  /** Answers given verbatim, in order, to the next requests to their path (a documented example, say). */
  readonly scripted: { path: string; status: number; body: unknown }[] = [];
  readonly topUps: AfricasTalkingTopUp[] = [];
  /** Every callback the stub posted, with the status our server answered (0: unreachable). */
  readonly delivered: { body: Record<string, string>; status: number }[] = [];
  callPlan: (recipients: { phoneNumber: string; amount: string }[], idempotencyKey: string) => AfricasTalkingCallPlan = () => ({});
  /** The plan for a number, as Africa's Talking writes it (+254…). */
  plan: (phoneNumber: string) => AfricasTalkingRecipientPlan = () => ({});
  /** The application's balance "Application Data" answers. */
  balance = DOCUMENTED.applicationData.UserData.balance;
  statusCallbackUrl = '';
  /** The API reference's callback (requestId and status, form-encoded) or the help centre's fuller JSON one. */
  callbackShape: 'documented' | 'full' = 'documented';
  /** Idempotency-Keys taken, with when. */
  private readonly keys = new Map<string, number>();
  private readonly pending = new Set<NodeJS.Timeout>();
  private readonly posting = new Set<Promise<number>>();
  private readonly stopped = new AbortController();
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

  /** The status callback about a top-up: the documented two fields, or the fuller form. */
  statusOf(
    t: AfricasTalkingTopUp,
    status: 'Success' | 'Failed' = t.final,
    shape = t.plan.callbackShape ?? this.callbackShape,
  ): Record<string, string> {
    if (shape === 'documented') return { requestId: t.requestId, status };
    return {
      phoneNumber: t.phoneNumber,
      description: status === 'Success' ? 'Airtime Delivered Successfully' : 'Airtime could not be delivered',
      status,
      requestId: t.requestId,
      discount: `KES ${DISCOUNT}`,
      value: t.amount,
    };
  }

  /** Lets Idempotency-Keys taken before now be forgotten, as Africa's Talking does after its window. */
  forgetKeys(): void {
    this.keys.clear();
  }

  /** Stops at once: no callback is posted after, those under way are cut, every connection is closed. */
  async close(): Promise<void> {
    for (const timer of this.pending) clearTimeout(timer);
    this.stopped.abort();
    await Promise.all([closeServer(this.server), ...this.posting]);
  }

  private async handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const fields = Object.fromEntries((req.method === 'GET' ? url.searchParams : new URLSearchParams(raw)).entries());
    this.received.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, fields });
    const script = this.scripted.findIndex((s) => s.path === url.pathname);
    if (script >= 0) {
      const [{ status, body }] = this.scripted.splice(script, 1);
      return typeof body === 'string' ? text(res, status, body) : json(res, status, body);
    }
    if (req.headers.apikey !== AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_API_KEY) {
      return text(res, 401, 'The supplied authentication is invalid');
    }
    if (req.method === 'GET' && url.pathname === '/query/transaction/find') return this.find(res, url.searchParams);
    if (req.method === 'GET' && url.pathname === '/version1/user') {
      if (url.searchParams.get('username') !== AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME)
        return text(res, 401, 'Invalid username');
      return json(res, 200, { UserData: { balance: this.balance } });
    }
    if (req.method !== 'POST' || url.pathname !== '/version1/airtime/send') return text(res, 404, 'Not found');
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return text(res, 415, 'Unsupported');
    const form = new URLSearchParams(raw);
    if (form.get('username') !== AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME) return text(res, 401, 'Invalid username');
    const recipients = readRecipients(form.get('recipients'));
    if (!recipients) return text(res, 400, 'Invalid recipients');
    const idempotencyKey = String(req.headers['idempotency-key'] ?? '');
    this.sends.push({ idempotencyKey, recipients });
    const plan = { fault: 'none', taken: true, ...this.callPlan(recipients, idempotencyKey) } as Required<AfricasTalkingCallPlan>;
    if (plan.fault === 'unauthorized') return text(res, 401, 'The supplied authentication is invalid');
    if (plan.fault === 'busy') return text(res, 503, 'Service Unavailable');
    if (plan.fault === 'refuse') return text(res, 400, 'Invalid amount: the value must be within the allowed range');
    const seen = this.keys.get(idempotencyKey);
    if (idempotencyKey && seen !== undefined && Date.now() - seen < IDEMPOTENCY_WINDOW_MS) {
      return json(res, 201, DOCUMENTED.sendDuplicate);
    }
    if (!plan.taken) return plan.fault === 'http500' ? text(res, 500, 'Internal Server Error') : undefined;
    if (idempotencyKey) this.keys.set(idempotencyKey, Date.now());
    const answers = recipients.map((r) => this.take(r, idempotencyKey));
    const taken = answers.filter((a): a is AfricasTalkingTopUp => 'requestId' in a);
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
      totalDiscount: `KES ${new Decimal(DISCOUNT).times(sent.length).toFixed(4)}`,
      responses: answers.map((a) =>
        'requestId' in a
          ? {
              phoneNumber: a.phoneNumber,
              errorMessage: a.sent === 'Failed' ? (a.plan.errorMessage ?? 'Insufficient Credit') : 'None',
              amount: a.amount,
              status: a.sent,
              requestId: a.sent === 'Sent' ? a.requestId : 'None',
              discount: a.sent === 'Sent' ? `KES ${DISCOUNT}` : 'KES 0.0000',
            }
          : {
              phoneNumber: a.phoneNumber,
              errorMessage: a.refused,
              amount: a.amount,
              status: 'Failed',
              requestId: 'None',
              discount: 'KES 0.0000',
            },
      ),
    });
  }

  /**
   * A number as Africa's Talking takes it: refused at once when it is not in the international form its SDK
   * requires (`^\+\d{1,3}\d{3,}$`) or the amount not "<currency> <decimal>"; otherwise a top-up, as planned.
   */
  private take(
    recipient: { phoneNumber: string; amount: string },
    idempotencyKey: string,
  ): AfricasTalkingTopUp | { phoneNumber: string; amount: string; refused: string } {
    const { phoneNumber } = recipient;
    if (!/^\+\d{1,3}\d{3,}$/.test(phoneNumber)) return { phoneNumber, amount: recipient.amount, refused: 'Invalid phone number' };
    const value = /^([A-Z]{3}) (\d+(?:\.\d+)?)$/.exec(recipient.amount);
    if (!value) return { phoneNumber, amount: recipient.amount, refused: 'Invalid amount' };
    const plan = { sent: 'Sent', final: 'Success', callback: 'once', ...this.plan(phoneNumber) } as AfricasTalkingRecipientPlan;
    const t: AfricasTalkingTopUp = {
      requestId: `ATQid_${randomBytes(16).toString('hex')}`,
      phoneNumber,
      // Africa's Talking writes amounts back with four decimals.
      amount: `${value[1]} ${new Decimal(value[2]).toFixed(4)}`,
      sent: plan.sent!,
      final: plan.sent === 'Failed' ? 'Failed' : plan.final!,
      finalAt: Date.now() + STATUS_AFTER_MS + (plan.delayMs ?? 0),
      plan,
      idempotencyKey,
      call: this.sends.length,
    };
    this.topUps.push(t);
    return t;
  }

  private find(res: ServerResponse, query: URLSearchParams): void {
    const transactionId = query.get('transactionId') ?? '';
    this.finds.push(transactionId);
    if (query.get('username') !== AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME) return text(res, 401, 'Invalid username');
    const t = this.topUps.find((candidate) => candidate.requestId === transactionId);
    if (!t) return json(res, 200, DOCUMENTED.findNotFound);
    json(res, 200, {
      ...DOCUMENTED.findAnswer,
      data: {
        ...DOCUMENTED.findAnswer.data,
        destination: t.phoneNumber,
        value: t.amount,
        transactionId: t.requestId,
        // With the telco ("Sent") until its final status.
        status: t.sent === 'Failed' || Date.now() >= t.finalAt ? t.final : 'Sent',
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

  private post(body: Record<string, string>): Promise<number> {
    const posted = this.postNow(body);
    this.posting.add(posted);
    void posted.finally(() => this.posting.delete(posted));
    return posted;
  }

  private async postNow(body: Record<string, string>): Promise<number> {
    let status: number;
    try {
      // The API reference's two fields come form-encoded; the help centre shows its fuller form as JSON.
      const json = 'phoneNumber' in body;
      const response = await fetch(this.statusCallbackUrl, {
        method: 'POST',
        headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
        body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
        signal: this.stopped.signal,
      });
      status = response.status;
      await response.body?.cancel();
    } catch {
      status = 0;
    }
    this.delivered.push({ body, status });
    return status;
  }
}

/** A final status comes a moment after the send is answered (so a test's callbacks do not race its answer). */
const STATUS_AFTER_MS = 200;

/** The discount Africa's Talking's examples show per top-up. */
const DISCOUNT = '0.6000';

/** The `recipients` form field: a JSON list of {phoneNumber, amount} strings, or null when it is not one. */
function readRecipients(raw: string | null): { phoneNumber: string; amount: string }[] | null {
  try {
    const list: unknown = JSON.parse(raw ?? '');
    if (!Array.isArray(list) || list.length === 0) return null;
    return list.every((r) => r && typeof r.phoneNumber === 'string' && typeof r.amount === 'string') ? list : null;
  } catch {
    return null;
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
}
