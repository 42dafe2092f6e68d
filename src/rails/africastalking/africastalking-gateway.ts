import { Inject, Injectable, Logger } from '@nestjs/common';
import Decimal from 'decimal.js';
import { createHash } from 'node:crypto';
import type { AirtimeTopUp } from '../airtime.rail';
import { RailHealth } from '../rail-health';
import { RailAnswer, RailRequestRow, RailRequestsRepository, ReconcilingGateway } from '../rail-requests.repository';
import { RAILS_CONFIG, type RailsConfig } from '../rails-config';
import {
  AfricasTalkingBusy,
  AfricasTalkingClient,
  AfricasTalkingRefused,
  AirtimeRecipient,
  AirtimeSendAnswer,
  FoundTransaction,
} from './africastalking.client';

export const AFRICASTALKING = 'africastalking';
const OPERATION = 'AIRTIME';
const SEND_PATH = '/version1/airtime/send';
/**
 * Numbers per send. Africa's Talking documents no limit per call; we keep calls small so that a call whose answer
 * is lost leaves few recipients unknown (docs/decisions.md "Airtime on Africa's Talking").
 */
export const RECIPIENTS_PER_CALL = 25;
const DAY_MS = 86_400_000;
const MAX_BACKOFF_MS = 3_600_000;

/** "KES 100.0000" read exactly: the currency and a decimal amount; null when it is not one. */
export function airtimeValue(value: string): { currency: string; amount: Decimal } | null {
  const match = /^\s*([A-Z]{3})\s+(\d+(?:\.\d+)?)\s*$/.exec(value);
  return match ? { currency: match[1], amount: new Decimal(match[2]) } : null;
}

/** Numbers compared by their digits (Africa's Talking answers +254…, a recipient may be stored without the +). */
export const sameNumber = (a: string, b: string) => a.replace(/\D/g, '') === b.replace(/\D/g, '');

/**
 * Airtime top-ups through Africa's Talking, one rail request per recipient, recorded before it leaves and sent in
 * calls of up to RECIPIENTS_PER_CALL distinct numbers. A top-up is sent once: again only when Africa's Talking said
 * it did not take it (busy). "Sent" is not an outcome: the status callback or query/transaction/find gives it.
 */
@Injectable()
export class AfricasTalkingGateway implements ReconcilingGateway {
  readonly rail = AFRICASTALKING;
  private readonly logger = new Logger('AfricasTalkingGateway');
  readonly client: AfricasTalkingClient;

  constructor(
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly requests: RailRequestsRepository,
    health: RailHealth,
  ) {
    this.client = new AfricasTalkingClient(rails.africastalking!, health.circuit(AFRICASTALKING));
  }

  /** Tops up each recipient not asked for before, and answers every top-up's request, in order. */
  async topUp(topUps: AirtimeTopUp[]): Promise<RailRequestRow[]> {
    const opened: { request: RailRequestRow; created: boolean }[] = [];
    for (const topUp of topUps) {
      opened.push(
        await this.requests.open(
          AFRICASTALKING,
          OPERATION,
          { kind: 'AIRTIME', id: topUp.recipientId },
          topUp.amount,
          () => ({ path: SEND_PATH, body: { phoneNumber: topUp.phoneNumber, amount: `${topUp.currency} ${topUp.amount}` } }),
          new Date(Date.now() + this.rails.reconcileAfterMs),
        ),
      );
    }
    for (const call of calls(opened.filter((o) => o.created).map((o) => o.request))) await this.send(call, true);
    return Promise.all(opened.map(async (o) => (await this.requests.byId(o.request.id))!));
  }

  bySubject(recipientId: string): Promise<RailRequestRow | null> {
    return this.requests.bySubject(AFRICASTALKING, OPERATION, { kind: 'AIRTIME', id: recipientId });
  }

  /**
   * One call for these requests, and what became of each: its requestId when taken, Failed when refused. A later
   * send (of a top-up Africa's Talking was too busy to take) that meets its duplicate check learns no outcome.
   */
  private async send(call: RailRequestRow[], first: boolean): Promise<void> {
    const recipients = call.map((request) => request.request.body as unknown as AirtimeRecipient);
    let answer: AirtimeSendAnswer;
    try {
      answer = await this.client.sendAirtime(recipients, idempotencyKey(call));
    } catch (error) {
      const reason = (error as Error).message;
      for (const request of call) {
        if (error instanceof AfricasTalkingRefused && (first || !duplicate(reason))) {
          await this.requests.answer(request.id, refusal('REFUSED', reason));
        } else if (error instanceof AfricasTalkingBusy) {
          await this.requests.recordSend(request.id, 'BUSY', { error: reason });
          await this.requests.scheduleNextQuery(request.id, new Date(Date.now() + Math.min(60_000, this.rails.reconcileAfterMs)), reason);
        } else {
          await this.requests.recordSend(request.id, 'UNKNOWN', { error: reason });
        }
      }
      if (!(error instanceof AfricasTalkingRefused || error instanceof AfricasTalkingBusy)) {
        this.logger.warn(`airtime send of ${call.length} top-up(s): ${reason}; never sent again, their outcome will be asked for`);
      }
      return;
    }
    for (const request of call) {
      const response = answer.responses.find((r) => sameNumber(r.phoneNumber, String(request.request.body.phoneNumber)));
      if (!response) {
        // A call answered without a word on each number took none of those it is silent about when it names an
        // error and no number at all; otherwise its fate is open.
        if (answer.responses.length === 0 && answer.errorMessage && (first || !duplicate(answer.errorMessage))) {
          await this.requests.answer(request.id, refusal('REFUSED', answer.errorMessage));
        } else {
          await this.requests.recordSend(request.id, 'UNKNOWN', { error: answer.errorMessage ?? 'not in the answer' });
        }
        continue;
      }
      const refused = response.status === 'Failed' && (first || !duplicate(response.errorMessage ?? ''));
      await this.requests.recordSend(request.id, response.requestId && response.status !== 'Failed' ? 'SENT' : 'UNKNOWN', {
        operatorRequestId: response.requestId,
        error: response.errorMessage,
      });
      if (refused) await this.requests.answer(request.id, refusal('Failed', response.errorMessage ?? 'Failed'));
    }
  }

  /**
   * One reconciliation step: jammed after a day without an answer (failed, if Africa's Talking never took it), sent
   * again if it was busy, else asked about by its requestId; a top-up whose send answer was lost has none to ask by.
   */
  async reconcile(request: RailRequestRow): Promise<void> {
    if (request.outcome === null && Date.now() - new Date(request.created_at).getTime() >= DAY_MS) {
      await this.requests.answer(
        request.id,
        request.state === 'BUSY'
          ? refusal('BUSY', "Africa's Talking did not take the top-up within 24 hours")
          : { outcome: 'JAMMED', resultCode: null, description: "No final status from Africa's Talking within 24 hours", receipt: null },
      );
      if (request.state === 'BUSY') return;
    }
    let error: string | null = null;
    try {
      if (request.state === 'BUSY') {
        if (await this.requests.resending(request.id)) await this.send([request], false);
      } else if (request.operator_request_id) {
        const known = foundAnswer(request.operator_request_id, await this.client.findTransaction(request.operator_request_id));
        if (known) await this.requests.answer(request.id, known);
      }
    } catch (failure) {
      if (!(failure instanceof AfricasTalkingBusy)) error = (failure as Error).message;
    }
    const backoff = Math.min(this.rails.reconcileAfterMs * 2 ** request.queries, MAX_BACKOFF_MS);
    await this.requests.scheduleNextQuery(request.id, new Date(Date.now() + backoff), error);
  }
}

/** What a final status ("Success" or "Failed", from the callback or the query) means for the request; null otherwise. */
export function statusAnswer(requestId: string, status: string | null, description: string | null): RailAnswer | null {
  if (status === 'Success')
    return { outcome: 'SUCCEEDED', resultCode: status, description: description ?? 'Airtime delivered', receipt: requestId };
  if (status === 'Failed') return refusal(status, description ?? 'Failed');
  return null;
}

function foundAnswer(requestId: string, found: FoundTransaction): RailAnswer | null {
  return found.found ? statusAnswer(requestId, found.status, found.description) : null;
}

function refusal(code: string, reason: string): RailAnswer {
  return { outcome: 'FAILED', resultCode: code, description: `Africa's Talking did not top up the number: ${reason}`, receipt: null };
}

/** Its idempotency check's answer: the same key was sent before, so that earlier call's fate is this one's. */
const duplicate = (reason: string) => /duplicate/i.test(reason);

/** The same key for the same top-ups, so a repeated call is recognised by Africa's Talking as one. */
function idempotencyKey(call: RailRequestRow[]): string {
  return createHash('sha256')
    .update(call.map((request) => request.id).join(','))
    .digest('hex')
    .slice(0, 32);
}

/** Calls of up to RECIPIENTS_PER_CALL requests, no number twice in one (Africa's Talking answers per number). */
function calls(requests: RailRequestRow[]): RailRequestRow[][] {
  const made: RailRequestRow[][] = [];
  for (const request of requests) {
    const number = String(request.request.body.phoneNumber);
    let call = made.find(
      (c) => c.length < RECIPIENTS_PER_CALL && !c.some((other) => sameNumber(String(other.request.body.phoneNumber), number)),
    );
    if (!call) made.push((call = []));
    call.push(request);
  }
  return made;
}
