import { Inject, Injectable, Logger } from '@nestjs/common';
import Decimal from 'decimal.js';
import { EngineMetrics } from '../../infra/metrics/engine-metrics';
import { RAILS_CONFIG, type JengaConfig, type RailsConfig } from '../rails-config';
import { RailHealth } from '../rail-health';
import { RailAnswer, RailRequestRow, RailRequestsRepository, ReconcilingGateway } from '../rail-requests.repository';
import { JengaBody, JengaBusy, JengaClient, JengaRefused, JengaSendWindowPassed } from './jenga.client';

export const JENGA = 'jenga';
const PESALINK_PATH = '/v3-apis/transaction-api/v3.0/remittance/pesalinkacc';
const STATUS_PATH = '/v3-apis/transaction-api/v3.0/transactions/details/';
const DAY_MS = 86_400_000;
const MAX_BACKOFF_MS = 3_600_000;

/** Our transfer.reference: the payout's id on 12 digits, the same on every send and query of that payout. */
export function transferReference(payoutId: string): string {
  return payoutId.padStart(12, '0');
}

/**
 * Bank payouts by PesaLink through Jenga, each payout one transfer: recorded in rail_requests before it leaves,
 * sent once (again only when Jenga said it did not take it), and asked about by its reference until it has an answer.
 */
@Injectable()
export class JengaGateway implements ReconcilingGateway {
  readonly rail = JENGA;
  private readonly logger = new Logger('JengaGateway');
  readonly config: JengaConfig;
  readonly client: JengaClient;

  constructor(
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly requests: RailRequestsRepository,
    health: RailHealth,
    private readonly metrics: EngineMetrics,
  ) {
    this.config = rails.jenga!;
    this.client = new JengaClient(this.config, this.config.timeoutMs, health.circuit(JENGA));
  }

  async pesalink(payout: {
    id: string;
    clientId: string;
    bankCode: string;
    accountNumber: string;
    accountName: string;
    amount: string;
    description: string;
  }) {
    const { request, created } = await this.requests.open(
      JENGA,
      'PESALINK',
      { kind: 'PAYOUT', id: payout.id, clientId: payout.clientId },
      payout.amount,
      () => ({
        path: PESALINK_PATH,
        body: {
          source: { countryCode: 'KE', name: this.config.sourceAccountName, accountNumber: this.config.sourceAccountNumber },
          destination: {
            type: 'bank',
            countryCode: 'KE',
            name: payout.accountName,
            bankCode: payout.bankCode,
            accountNumber: payout.accountNumber,
          },
          transfer: {
            type: 'PesaLink',
            amount: twoDecimals(payout.amount),
            currencyCode: 'KES',
            reference: transferReference(payout.id),
            date: new Date().toISOString().slice(0, 10),
            description: payout.description.slice(0, 100),
          },
        },
      }),
      new Date(Date.now() + this.rails.reconcileAfterMs),
    );
    if (created) await this.send(request, true, new Date(request.created_at).getTime() + this.config.timeoutMs);
    return (await this.requests.byId(request.id))!;
  }

  bySubject(payoutId: string): Promise<RailRequestRow | null> {
    return this.requests.bySubject(JENGA, 'PESALINK', { kind: 'PAYOUT', id: payoutId });
  }

  /**
   * Sends the transfer unless `notAfter` has passed by the time it would leave. Reconciliation reads Jenga's "not
   * found" as "not taken" only once a send's window and its time-out are surely over; a send that a stalled process
   * would make later is dropped instead, so it can never land after a send again.
   */
  private async send(request: RailRequestRow, first: boolean, notAfter: number): Promise<void> {
    const body = request.request.body as { source: JengaBody; destination: JengaBody; transfer: JengaBody };
    // "PesaLink - Send to Bank Account": transfer.amount + transfer.currencyCode + transfer.reference + destination.name + source.accountNumber.
    const signed = this.client.signature([
      String(body.transfer.amount),
      String(body.transfer.currencyCode),
      String(body.transfer.reference),
      String(body.destination.name),
      String(body.source.accountNumber),
    ]);
    try {
      const answer = await this.client.call('POST', request.request.path, body, signed, notAfter);
      const data = (answer.data ?? {}) as JengaBody;
      await this.requests.recordSend(request, 'SENT', { operatorRequestId: data.transactionId ? String(data.transactionId) : null });
      const status = String(data.status ?? '');
      if (status === 'SUCCESS') {
        await this.requests.answer(request, {
          outcome: 'SUCCEEDED',
          resultCode: '0',
          description: 'Processed successfully',
          receipt: data.transactionId ? String(data.transactionId) : null,
        });
      } else if (!SEND_NOT_YET.has(status)) {
        this.unknownAnswer(request, 'pesalink', `data.status ${JSON.stringify(data.status)}`);
      }
    } catch (error) {
      if (error instanceof JengaSendWindowPassed) {
        // Left as it is (not sent): reconciliation asks Jenga, and sends again only once it says it has none.
        this.logger.warn(`PesaLink ${request.id}: ${error.message}`);
        return;
      }
      if (error instanceof JengaRefused && !(!first && /duplicate|already/i.test(error.message))) {
        await this.requests.answer(request, {
          outcome: 'FAILED',
          resultCode: error.code,
          description: `Jenga refused the transfer: ${error.message}`,
          receipt: null,
        });
      } else if (error instanceof JengaBusy) {
        await this.requests.recordSend(request, 'BUSY', { error: error.message });
        await this.requests.scheduleNextQuery(request, new Date(Date.now() + Math.min(60_000, this.rails.reconcileAfterMs)), error.message);
      } else {
        this.logger.warn(`PesaLink ${request.id}: ${(error as Error).message}; its outcome will be asked for`);
        await this.requests.recordSend(request, 'UNKNOWN', { error: (error as Error).message });
      }
    }
  }

  /** A word Jenga's pages do not give: logged and counted; the transfer stays held and is asked about again. */
  private unknownAnswer(request: RailRequestRow, call: 'pesalink' | 'transaction-details', what: string): void {
    this.logger.warn(`PesaLink ${request.id}: Jenga answered ${what} on ${call}, a state we do not know; kept held, asked again`);
    this.metrics.railUnknownAnswer('bank', call);
  }

  /** Jammed after a day without an answer (failed, if Jenga never took it); sent again if Jenga was busy; else asked. */
  async reconcile(request: RailRequestRow): Promise<void> {
    if (request.outcome === null && Date.now() - new Date(request.created_at).getTime() >= DAY_MS) {
      await this.requests.answer(
        request,
        request.state === 'BUSY'
          ? { outcome: 'FAILED', resultCode: 'BUSY', description: 'Jenga did not take the transfer within 24 hours', receipt: null }
          : { outcome: 'JAMMED', resultCode: null, description: 'No answer from Jenga within 24 hours', receipt: null },
      );
      if (request.state === 'BUSY') return;
    }
    let error: string | null = null;
    try {
      if (request.state === 'BUSY') {
        if (await this.requests.resending(request)) await this.send(request, false, Date.now() + this.config.timeoutMs);
      } else {
        const reference = String((request.request.body.transfer as JengaBody).reference);
        // "Query Transaction Details": the signature is over the reference alone.
        const answer = await this.client.call('GET', `${STATUS_PATH}${reference}`, null, this.client.signature([reference]));
        const data = (answer.data ?? {}) as JengaBody;
        const state = transferState(data);
        if (state === 'UNKNOWN') {
          this.unknownAnswer(
            request,
            'transaction-details',
            `state ${JSON.stringify(data.state)}, stateCode ${JSON.stringify(data.stateCode)}`,
          );
        } else if (state !== 'NOT_YET') {
          await this.requests.answer(request, state);
        }
      }
    } catch (failure) {
      // "No such transfer" for one we never saw taken may be sent again under the same reference, but only once its
      // first send is surely over (token and call each bounded by the time-out): asked while that send is still in
      // flight, Jenga cannot know it yet, and a send again would pay twice wherever the reference is not refused.
      const firstSendOver = Date.now() - new Date(request.created_at).getTime() > 2 * this.config.timeoutMs + this.rails.reconcileAfterMs;
      if (
        failure instanceof JengaRefused &&
        request.state !== 'SENT' &&
        firstSendOver &&
        /not found|no record|does not exist/i.test(failure.message)
      ) {
        await this.requests.recordSend(request, 'BUSY', { error: failure.message });
      } else if (!(failure instanceof JengaBusy)) error = (failure as Error).message;
    }
    const backoff = Math.min(this.rails.reconcileAfterMs * 2 ** request.queries, MAX_BACKOFF_MS);
    await this.requests.scheduleNextQuery(request, new Date(Date.now() + backoff), error);
  }
}

/**
 * The send's `data.status` words ("PesaLink - Send to Bank Account"): SUCCESS is paid; PENDING (still processing) is
 * settled by the status query, as is every word but SUCCESS, so that no word read at the send releases money.
 */
const SEND_NOT_YET = new Set(['PENDING']);

/**
 * "Query Transaction Details" answers `data.state` with `data.stateCode`: "Success" with 2 is paid, "Failed" with 1
 * failed; stateCode -1 (awaiting the bank's answer) and the pending words are not yet. A word with a code the page
 * does not pair with it is UNKNOWN: held and asked again, never read as a failure.
 */
function transferState(data: JengaBody): RailAnswer | 'NOT_YET' | 'UNKNOWN' {
  const state = String(data.state ?? '').trim();
  const stateCode = Number(data.stateCode);
  if (/^success$/i.test(state) && stateCode === 2) {
    return { outcome: 'SUCCEEDED', resultCode: '2', description: 'Processed successfully', receipt: null };
  }
  if (/^failed$/i.test(state) && stateCode === 1) {
    return {
      outcome: 'FAILED',
      resultCode: '1',
      description: `The bank refused the transfer${data.message ? `: ${String(data.message)}` : ''}`,
      receipt: null,
    };
  }
  if (stateCode === -1 || /^(pending|processing|in ?progress)$/i.test(state)) return 'NOT_YET';
  return 'UNKNOWN';
}

/** Acceptance allows at most two decimals on a bank payout; Jenga takes them written out. */
function twoDecimals(amount: string): string {
  return new Decimal(amount).toFixed(2);
}
