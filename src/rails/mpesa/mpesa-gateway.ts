import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHmac } from 'node:crypto';
import { EngineMetrics } from '../../infra/metrics/engine-metrics';
import { RAILS_CONFIG, type MpesaConfig, type RailsConfig } from '../rails-config';
import { RailHealth } from '../rail-health';
import {
  RailAnswer,
  RailRequestRow,
  RailRequestsRepository,
  RailSubject,
  ReconcilingGateway,
  SubjectKind,
} from '../rail-requests.repository';
import { DarajaBody, DarajaBusy, DarajaClient, DarajaDuplicate, DarajaRefused } from './daraja.client';
import { stkAnswer } from './mpesa-results';

export const MPESA = 'mpesa';
/** The rail M-Pesa plays, as `paygate_rail_unknown_answers_total` names it. */
export const MOBILE_MONEY_RAIL_NAME = 'mobile_money';
export type MpesaOperation = 'STK_PUSH' | 'B2C' | 'B2B' | 'REVERSAL';

/**
 * Callback kinds: the last-but-one path segment of every URL we give Daraja. The `query-*` kinds answer the
 * reconciliation's own queries (Account Balance, Transaction Status), `pull` the Pull Transactions registration.
 */
export type MpesaCallbackKind = 'stk' | 'result' | 'timeout' | 'status' | 'status-timeout' | 'query-result' | 'query-timeout' | 'pull';

const DAY_MS = 86_400_000;
const MAX_BACKOFF_MS = 3_600_000;

const PATHS: Record<MpesaOperation, string> = {
  STK_PUSH: '/mpesa/stkpush/v1/processrequest',
  B2C: '/mpesa/b2c/v3/paymentrequest',
  B2B: '/mpesa/b2b/v1/paymentrequest',
  REVERSAL: '/mpesa/reversal/v1/request',
};

/** Amounts go to Daraja as whole shillings (acceptance refused anything else). */
const shillings = (amount: string) => Number(amount.replace(/\.0*$/, ''));

/**
 * Our requests to Daraja, each sent at most once (a BUSY answer, which Daraja gives only when it did not take the
 * request, is the one case sent again), and asked about until answered. Every send is recorded in rail_requests
 * before it leaves, so a crash mid-call leaves a request whose fate is asked about, not a request sent twice.
 */
@Injectable()
export class MpesaGateway implements ReconcilingGateway {
  readonly rail = MPESA;
  private readonly logger = new Logger('MpesaGateway');
  readonly config: MpesaConfig;
  readonly client: DarajaClient;
  /** The unguessable path segment of our callback URLs (derived from the consumer secret, so it needs no variable). */
  readonly callbackToken: string;

  constructor(
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly requests: RailRequestsRepository,
    health: RailHealth,
    private readonly metrics: EngineMetrics,
  ) {
    this.config = rails.mpesa!;
    this.client = new DarajaClient(this.config, this.config.timeoutMs, health.circuit(MPESA));
    this.callbackToken = createHmac('sha256', this.config.consumerSecret).update('paygate mpesa callbacks').digest('hex').slice(0, 32);
  }

  callbackUrl(kind: MpesaCallbackKind, requestId: string): string {
    return `${this.config.callbackBaseUrl}/rails/mpesa/${this.callbackToken}/${kind}/${requestId}`;
  }

  /** An STK push asking the payer to pay a payment; sent once per payment. */
  stkPush(payment: { id: string; clientId: string; payerMsisdn: string; amount: string }): Promise<RailRequestRow> {
    return this.ensureSent('STK_PUSH', { kind: 'PAYMENT', id: payment.id, clientId: payment.clientId }, payment.amount, (id) => ({
      BusinessShortCode: this.config.shortcode,
      TransactionType: this.config.transactionType,
      Amount: shillings(payment.amount),
      PartyA: payment.payerMsisdn,
      PartyB: this.config.shortcode,
      PhoneNumber: payment.payerMsisdn,
      CallBackURL: this.callbackUrl('stk', id),
      AccountReference: `P${payment.id}`.slice(0, 12),
      TransactionDesc: 'Payment',
    }));
  }

  /** A B2C payment to a phone (OriginatorConversationID is the request's id: one per payout). */
  b2c(payout: { id: string; clientId: string; msisdn: string; amount: string }): Promise<RailRequestRow> {
    return this.ensureSent('B2C', { kind: 'PAYOUT', id: payout.id, clientId: payout.clientId }, payout.amount, (id) => ({
      OriginatorConversationID: id,
      InitiatorName: this.config.initiatorName,
      CommandID: 'BusinessPayment',
      Amount: shillings(payout.amount),
      PartyA: this.config.payoutShortcode,
      PartyB: payout.msisdn,
      Remarks: 'Payout',
      QueueTimeOutURL: this.callbackUrl('timeout', id),
      ResultURL: this.callbackUrl('result', id),
    }));
  }

  /** A B2B payment to a paybill (with its account reference) or a till. */
  b2b(payout: {
    id: string;
    clientId: string;
    to: 'PAYBILL' | 'TILL';
    number: string;
    accountReference: string | null;
    amount: string;
  }): Promise<RailRequestRow> {
    return this.ensureSent('B2B', { kind: 'PAYOUT', id: payout.id, clientId: payout.clientId }, payout.amount, (id) => ({
      Initiator: this.config.initiatorName,
      CommandID: payout.to === 'PAYBILL' ? 'BusinessPayBill' : 'BusinessBuyGoods',
      SenderIdentifierType: '4',
      RecieverIdentifierType: '4',
      Amount: shillings(payout.amount),
      PartyA: this.config.payoutShortcode,
      PartyB: payout.number,
      AccountReference: (payout.accountReference ?? '').slice(0, 13),
      Remarks: 'B2B payment',
      QueueTimeOutURL: this.callbackUrl('timeout', id),
      ResultURL: this.callbackUrl('result', id),
    }));
  }

  /** Reverses an M-Pesa collection (by its receipt) back to the payer: one reversal per collection reversal. */
  reversal(reversal: { id: string; clientId: string; receipt: string; amount: string }): Promise<RailRequestRow> {
    return this.ensureSent('REVERSAL', { kind: 'REVERSAL', id: reversal.id, clientId: reversal.clientId }, reversal.amount, (id) => ({
      Initiator: this.config.initiatorName,
      CommandID: 'TransactionReversal',
      TransactionID: reversal.receipt,
      Amount: shillings(reversal.amount),
      ReceiverParty: this.config.shortcode,
      RecieverIdentifierType: '11',
      ResultURL: this.callbackUrl('result', id),
      QueueTimeOutURL: this.callbackUrl('timeout', id),
      Remarks: 'Reversal',
    }));
  }

  bySubject(operation: MpesaOperation, subject: { kind: SubjectKind; id: string }): Promise<RailRequestRow | null> {
    return this.requests.bySubject(MPESA, operation, subject);
  }

  private async ensureSent(
    operation: MpesaOperation,
    subject: RailSubject,
    amount: string,
    body: (id: string) => DarajaBody,
  ): Promise<RailRequestRow> {
    const { request, created } = await this.requests.open(
      MPESA,
      operation,
      subject,
      amount,
      (id) => ({ path: PATHS[operation], body: body(id) }),
      new Date(Date.now() + this.rails.reconcileAfterMs),
    );
    if (!created) return request;
    await this.send(request);
    return (await this.requests.byId(request.id))!;
  }

  /**
   * Sends a request as recorded, with credentials made now, and records what became of it. A later send of a
   * request whose first fate was unknown may meet M-Pesa's own duplicate check: that refusal is no outcome.
   */
  async send(request: RailRequestRow): Promise<void> {
    const operation = request.operation as MpesaOperation;
    const secrets = operation === 'STK_PUSH' ? this.client.stkPassword() : { SecurityCredential: this.client.initiatorCredential() };
    try {
      const answer = await this.client.post(request.request.path, { ...request.request.body, ...secrets });
      // The synchronous answer: ResponseCode "0" is taken; any other code is Daraja's refusal (the pages' "Response
      // Parameter Definition": "0 means success and any other code means an error occurred").
      if (String(answer.ResponseCode) !== '0') {
        await this.requests.answer(request, refusal(String(answer.ResponseCode), String(answer.ResponseDescription ?? '')));
        return;
      }
      await this.requests.recordSend(request, 'SENT', {
        operatorRequestId: String(answer.CheckoutRequestID ?? answer.ConversationID ?? '') || null,
        operatorConversationId: String(answer.OriginatorConversationID ?? answer.MerchantRequestID ?? '') || null,
      });
    } catch (error) {
      if (error instanceof DarajaDuplicate) {
        // M-Pesa already holds a request under this OriginatorConversationID: ours, taken earlier. It is asked about.
        await this.requests.recordSend(request, 'UNKNOWN', { error: error.message });
      } else if (error instanceof DarajaRefused) {
        await this.requests.answer(request, refusal(error.code, error.message));
      } else if (error instanceof DarajaBusy) {
        await this.requests.recordSend(request, 'BUSY', { error: error.message });
        await this.requests.scheduleNextQuery(request, new Date(Date.now() + Math.min(60_000, this.rails.reconcileAfterMs)), error.message);
      } else {
        this.logger.warn(`${operation} ${request.id}: ${(error as Error).message}; its outcome will be asked for`);
        await this.requests.recordSend(request, 'UNKNOWN', { error: (error as Error).message });
      }
    }
  }

  /**
   * One reconciliation step for a request without a final answer: jammed after a day without one (a request M-Pesa
   * never took fails instead), sent again if M-Pesa was busy, else asked about (an STK query answers at once, a
   * transaction status query at our status URL), then the next question scheduled on a back-off.
   */
  async reconcile(request: RailRequestRow): Promise<void> {
    const age = Date.now() - new Date(request.created_at).getTime();
    if (request.outcome === null && age >= DAY_MS) {
      await this.requests.answer(
        request,
        request.state === 'BUSY'
          ? refusal('BUSY', 'M-Pesa did not take the request within 24 hours')
          : { outcome: 'JAMMED', resultCode: null, description: 'No answer from M-Pesa within 24 hours', receipt: null },
      );
      if (request.state === 'BUSY') return;
    }
    let error: string | null = null;
    try {
      if (request.state === 'BUSY') {
        if (await this.requests.resending(request)) await this.send(request);
      } else await this.ask(request);
    } catch (failure) {
      error = (failure as Error).message;
    }
    const backoff = Math.min(this.rails.reconcileAfterMs * 2 ** request.queries, MAX_BACKOFF_MS);
    await this.requests.scheduleNextQuery(request, new Date(Date.now() + backoff), error);
  }

  private async ask(request: RailRequestRow): Promise<void> {
    if (request.operation === 'STK_PUSH') {
      // Without Daraja's CheckoutRequestID there is nothing to ask: its callback (which carries our id) or the day's end decides.
      if (!request.operator_request_id) return;
      try {
        const answer = await this.client.post('/mpesa/stkpushquery/v1/query', {
          BusinessShortCode: this.config.shortcode,
          ...this.client.stkPassword(),
          CheckoutRequestID: request.operator_request_id,
        });
        if (answer.ResultCode === undefined || answer.ResultCode === null) return;
        const code = String(answer.ResultCode);
        const known = stkAnswer(code, String(answer.ResultDesc ?? ''), null);
        if (known) await this.requests.answer(request, known);
        else {
          this.logger.warn(`STK query about ${request.id} answers ResultCode ${code}, which we do not know: asked again later`);
          this.metrics.railUnknownAnswer(MOBILE_MONEY_RAIL_NAME, 'stk_query');
        }
      } catch (error) {
        // "The transaction is being processed" is a busy answer: nothing known yet.
        if (!(error instanceof DarajaBusy) && !(error instanceof DarajaRefused)) throw error;
      }
      return;
    }
    const conversation = request.operator_conversation_id ?? (request.operation === 'B2C' ? request.id : null);
    if (!conversation) return;
    await this.client.post('/mpesa/transactionstatus/v1/query', {
      Initiator: this.config.initiatorName,
      SecurityCredential: this.client.initiatorCredential(),
      CommandID: 'TransactionStatusQuery',
      OriginalConversationID: conversation,
      PartyA: request.operation === 'REVERSAL' ? this.config.shortcode : this.config.payoutShortcode,
      IdentifierType: '4',
      ResultURL: this.callbackUrl('status', request.id),
      QueueTimeOutURL: this.callbackUrl('status-timeout', request.id),
      Remarks: 'Status',
    });
  }
}

/** Daraja refused the request itself (a final answer: the money did not move). */
function refusal(code: string, message: string): RailAnswer {
  return { outcome: 'FAILED', resultCode: code, description: `M-Pesa refused the request: ${message}`.trim(), receipt: null };
}
