import { Inject, Injectable, Logger } from '@nestjs/common';
import Decimal from 'decimal.js';
import { createHash } from 'node:crypto';
import { EngineMetrics } from '../../infra/metrics/engine-metrics';
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
/** The kind of its status callbacks in rail_callbacks. */
export const STATUS_CALLBACK = 'airtime-status';
/**
 * Numbers per send. Africa's Talking documents no limit per call; we keep calls small so that a call whose answer
 * is lost leaves few recipients unknown (docs/decisions.md "Airtime on Africa's Talking").
 */
export const RECIPIENTS_PER_CALL = 25;
/**
 * How long after a call its Idempotency-Key is sent again when its answer was lost. Africa's Talking answers a key
 * it saw within the last 5 minutes as a duplicate and forgets it after; a minute of margin covers our clock and the
 * call's own time (docs/decisions.md).
 */
export const REPEAT_WINDOW_MS = 4 * 60_000;
/** A top-up whose answer was lost is first asked about this soon (its repeat must fall in the window). */
const LOST_ASK_AFTER_MS = 30_000;
const DAY_MS = 86_400_000;
const MAX_BACKOFF_MS = 3_600_000;

/** How one send call carried its requests, kept on each of them (`request.call`) before it leaves. */
interface SentCall {
  /** The call's requests, in the order of its recipients. */
  members: string[];
  idempotencyKey: string;
  /** When the call first left with this key. */
  sentAt: string;
  /** Africa's Talking answered a repeat as a duplicate: it has the call, so repeating it tells nothing more. */
  taken?: boolean;
  /** When the call was first repeated: from then on no answer of the call marks the request not taken (BUSY). */
  repeatedAt?: string | null;
}

/** First send, a send again of one it did not take (busy), or a repeat of a call whose answer was lost (same key). */
type SendKind = 'first' | 'again' | 'repeat';

/** "KES 100.0000" read exactly: the currency and a decimal amount; null when it is not one. */
export function airtimeValue(value: string): { currency: string; amount: Decimal } | null {
  const match = /^\s*([A-Z]{3})\s+(\d+(?:\.\d+)?)\s*$/.exec(value);
  return match ? { currency: match[1], amount: new Decimal(match[2]) } : null;
}

/** Two airtime values are the same currency and amount ("KES 100" is "KES 100.0000"). */
export function sameValue(a: string | null, b: string | null): boolean {
  const [x, y] = [airtimeValue(a ?? ''), airtimeValue(b ?? '')];
  return !!x && !!y && x.currency === y.currency && x.amount.eq(y.amount);
}

/** Numbers compared by their digits (Africa's Talking answers +254…, a recipient may be stored without the +). */
export const sameNumber = (a: string, b: string) => a.replace(/\D/g, '') === b.replace(/\D/g, '');

/** A recipient's number as Africa's Talking takes it: international, with its + (the merchant may type it without). */
export const internationalNumber = (phoneNumber: string) => `+${phoneNumber.replace(/\D/g, '')}`;

/** An amount as Africa's Talking takes it: "<currency> <decimal>", as its example writes it ("KES 100", "KES 1.5"). */
export const airtimeAmount = (currency: string, amount: string) => `${currency} ${new Decimal(amount).toFixed()}`;

/**
 * What a status word of Africa's Talking (a callback's, or query/transaction/find's for the transaction) means:
 * final, still under way ("Sent": with the telco), or a word we do not know (null).
 */
export function statusAnswer(requestId: string, status: string | null, description: string | null): RailAnswer | 'UNDER_WAY' | null {
  if (status === 'Success')
    return { outcome: 'SUCCEEDED', resultCode: status, description: description ?? 'Airtime delivered', receipt: requestId };
  if (status === 'Failed') return refusal(status, description ?? 'Failed');
  if (status === 'Sent') return 'UNDER_WAY';
  return null;
}

/**
 * Airtime top-ups through Africa's Talking, one rail request per recipient, recorded before it leaves and sent in
 * calls of up to RECIPIENTS_PER_CALL distinct numbers. A top-up is sent once: again only when Africa's Talking said
 * it did not take it (busy), or, when a call's answer was lost, repeated with the same Idempotency-Key within the
 * window Africa's Talking remembers it, so that it tops up at most once. "Sent" is not an outcome: the status
 * callback or query/transaction/find gives it.
 */
@Injectable()
export class AfricasTalkingGateway implements ReconcilingGateway {
  readonly rail = AFRICASTALKING;
  private readonly logger = new Logger('AfricasTalkingGateway');
  readonly client: AfricasTalkingClient;

  constructor(
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly requests: RailRequestsRepository,
    private readonly metrics: EngineMetrics,
    health: RailHealth,
  ) {
    this.client = new AfricasTalkingClient(rails.africastalking!, health.circuit(AFRICASTALKING));
  }

  /** Tops up each recipient not asked for before, and answers every top-up's request, in order. */
  async topUp(topUps: AirtimeTopUp[]): Promise<RailRequestRow[]> {
    const opened: { request: RailRequestRow; created: boolean }[] = [];
    for (const topUp of topUps) {
      const recipient: AirtimeRecipient = {
        phoneNumber: internationalNumber(topUp.phoneNumber),
        amount: airtimeAmount(topUp.currency, topUp.amount),
      };
      opened.push(
        await this.requests.open(
          AFRICASTALKING,
          OPERATION,
          { kind: 'AIRTIME', id: topUp.recipientId, clientId: topUp.clientId },
          topUp.amount,
          () => ({ path: SEND_PATH, body: { ...recipient } }),
          new Date(Date.now() + this.rails.reconcileAfterMs),
        ),
      );
    }
    for (const call of calls(opened.filter((o) => o.created).map((o) => o.request))) await this.send(call, 'first');
    return Promise.all(opened.map(async (o) => (await this.requests.byId(o.request.id))!));
  }

  bySubject(recipientId: string): Promise<RailRequestRow | null> {
    return this.requests.bySubject(AFRICASTALKING, OPERATION, { kind: 'AIRTIME', id: recipientId });
  }

  /**
   * One call for these requests, and what became of each: its requestId when taken, Failed when refused. A call's
   * key is kept on its requests before it leaves, so that a lost answer can be repeated under it. A duplicate answer
   * means Africa's Talking has a call under this key (a repeat may overtake a slow first send): never a refusal.
   */
  private async send(call: RailRequestRow[], kind: SendKind, repeatedKey?: string): Promise<void> {
    const ids = call.map((request) => request.id);
    const idempotencyKey = repeatedKey ?? idempotencyKeyOf(ids);
    if (kind !== 'repeat') {
      const sent: SentCall = { members: ids, idempotencyKey, sentAt: new Date().toISOString(), taken: false, repeatedAt: null };
      await this.requests.noteCall(call[0].client_id, ids, { ...sent });
    }
    const recipients = call.map((request) => request.request.body as unknown as AirtimeRecipient);
    let answer: AirtimeSendAnswer;
    try {
      answer = await this.client.sendAirtime(recipients, idempotencyKey);
    } catch (error) {
      const reason = (error as Error).message;
      if (error instanceof AfricasTalkingRefused && duplicate(reason)) return this.taken(call, reason);
      for (const request of call) {
        if (error instanceof AfricasTalkingRefused) {
          await this.requests.answer(request, refusal('REFUSED', reason));
        } else if (error instanceof AfricasTalkingBusy && kind !== 'repeat') {
          // Only while it is being sent: a slow step's 503 never reopens a top-up whose fate is open.
          await this.requests.recordSend(request, 'BUSY', { error: reason }, true);
          await this.requests.scheduleNextQuery(request, new Date(Date.now() + Math.min(60_000, this.rails.reconcileAfterMs)), reason);
        } else {
          // Lost (or, for a repeat, not taken this time): the key is repeated within its window, never a new one.
          await this.requests.recordSend(request, 'UNKNOWN', { error: reason });
          if (kind !== 'repeat') await this.askSoon(request, reason);
        }
      }
      if (!(error instanceof AfricasTalkingRefused || error instanceof AfricasTalkingBusy)) {
        this.logger.warn(`airtime send of ${call.length} top-up(s): ${reason}; asked about by the same key, never sent anew`);
      }
      return;
    }
    if (answer.responses.length === 0 && answer.errorMessage && duplicate(answer.errorMessage)) {
      return this.taken(call, answer.errorMessage);
    }
    for (const request of call) {
      const response = answer.responses.find((r) => sameNumber(r.phoneNumber, String(request.request.body.phoneNumber)));
      if (!response) {
        // A call answered without a word on each number took none of those it is silent about when it names an
        // error and no number at all; otherwise its fate is open.
        if (answer.responses.length === 0 && answer.errorMessage) {
          await this.requests.answer(request, refusal('REFUSED', answer.errorMessage));
        } else {
          await this.requests.recordSend(request, 'UNKNOWN', { error: answer.errorMessage ?? 'not in the answer' });
          if (kind !== 'repeat') await this.askSoon(request, 'not in the answer');
        }
      } else if (response.status === 'Failed' && !duplicate(response.errorMessage ?? '')) {
        await this.requests.answer(request, refusal('Failed', response.errorMessage ?? 'Failed'));
      } else if (response.status === 'Sent' && response.requestId) {
        await this.requests.recordSend(request, 'SENT', { operatorRequestId: response.requestId, error: null });
      } else {
        if (response.status !== 'Sent' && response.status !== 'Failed') this.unknownWord('send', response.status, request);
        // Taken or not, it has no id to ask by (yet): its callback, or a repeat of the call, tells.
        await this.requests.recordSend(request, response.requestId ? 'SENT' : 'UNKNOWN', {
          operatorRequestId: response.requestId,
          error: response.errorMessage ?? `answered "${response.status}"`,
        });
      }
    }
  }

  /** Africa's Talking has these requests' call (it answered a repeat as a duplicate): no use repeating it again. */
  private async taken(call: RailRequestRow[], reason: string): Promise<void> {
    await this.requests.noteCall(
      call[0].client_id,
      call.map((request) => request.id),
      { taken: true },
    );
    for (const request of call) await this.requests.recordSend(request, 'UNKNOWN', { error: reason });
  }

  private async askSoon(request: RailRequestRow, reason: string): Promise<void> {
    await this.requests.scheduleNextQuery(request, new Date(Date.now() + Math.min(LOST_ASK_AFTER_MS, this.rails.reconcileAfterMs)), reason);
  }

  /**
   * One reconciliation step: jammed after a day without an answer (failed, if Africa's Talking never took it), sent
   * again if it was busy, asked about by its requestId, or, when the send answer was lost, recognised (docs/decisions.md).
   */
  async reconcile(request: RailRequestRow): Promise<void> {
    if (request.outcome === null && Date.now() - new Date(request.created_at).getTime() >= DAY_MS) {
      await this.requests.answer(
        request,
        request.state === 'BUSY'
          ? refusal('BUSY', "Africa's Talking did not take the top-up within 24 hours")
          : { outcome: 'JAMMED', resultCode: null, description: "No final status from Africa's Talking within 24 hours", receipt: null },
      );
      if (request.state === 'BUSY') return;
    }
    let error: string | null = null;
    try {
      if (request.state === 'BUSY') {
        if (await this.requests.resending(request)) await this.send([request], 'again');
      } else if (request.operator_request_id) {
        const known = this.foundAnswer(
          request,
          request.operator_request_id,
          await this.client.findTransaction(request.operator_request_id),
        );
        if (known) await this.requests.answer(request, known);
      } else if (request.outcome === null && this.answerLost(request)) {
        await this.recognise(request);
      }
    } catch (failure) {
      if (!(failure instanceof AfricasTalkingBusy)) error = (failure as Error).message;
    }
    const backoff = Math.min(this.rails.reconcileAfterMs * 2 ** request.queries, MAX_BACKOFF_MS);
    // A call still under way (or whose process died) is asked about as soon as it counts as lost, within the window.
    const lostAt = request.state === 'SENDING' ? this.lostAt(request) : null;
    const next = lostAt !== null && lostAt > Date.now() ? Math.min(backoff, lostAt - Date.now() + 100) : backoff;
    await this.requests.scheduleNextQuery(request, new Date(Date.now() + next), error);
  }

  /** When a call left without an answer counts as lost: twice the time-out after it left (null: it never left). */
  private lostAt(request: RailRequestRow): number | null {
    const call = sentCall(request);
    return call ? Date.parse(call.sentAt) + this.rails.africastalking!.timeoutMs * 2 : null;
  }

  /** Its call is over without an id for it: the answer was lost, or the process died during the call. */
  private answerLost(request: RailRequestRow): boolean {
    const lostAt = this.lostAt(request);
    return lostAt !== null && (request.state === 'UNKNOWN' || (request.state === 'SENDING' && Date.now() > lostAt));
  }

  /**
   * A top-up whose send answer was lost. Within the window, its call is repeated under the same Idempotency-Key:
   * Africa's Talking either never had it (and takes it now, once, answering its requestIds) or answers a duplicate.
   * Otherwise (or after a duplicate) a status callback that matched nothing may be its: Africa's Talking's own record
   * of that requestId (query/transaction/find) must name this number and value, and no other open top-up of ours
   * without an id may be the same number and value, nor another such transaction this top-up's.
   */
  private async recognise(request: RailRequestRow): Promise<void> {
    // Read afresh: a sibling's step in the same pass may have found the call taken.
    const call = sentCall((await this.requests.byId(request.id)) ?? request)!;
    if (!call.taken && Date.now() - Date.parse(call.sentAt) < REPEAT_WINDOW_MS) {
      // Only the call's requests still waiting on it, under its own key: never a request sent again under another.
      const waiting = await this.requests.noteRepeat(request.client_id, call.members, call.idempotencyKey);
      if (waiting.length > 0) await this.send(await this.requests.byIds(waiting), 'repeat', call.idempotencyKey);
      const now = (await this.requests.byId(request.id))!;
      if (now.operator_request_id || now.outcome || now.state === 'BUSY') return;
    }
    const phoneNumber = String(request.request.body.phoneNumber);
    const amount = String(request.request.body.amount);
    const since = new Date(Date.parse(call.sentAt) - 60_000);
    const candidates: { requestId: string; found: FoundTransaction }[] = [];
    for (const status of await this.requests.unmatchedCallbacks(AFRICASTALKING, STATUS_CALLBACK, 'requestId', since)) {
      const requestId = String(status.requestId);
      // A callback that names a number or value names them as the transaction's: no query for another's.
      if (typeof status.phoneNumber === 'string' && !sameNumber(status.phoneNumber, phoneNumber)) continue;
      if (typeof status.value === 'string' && !sameValue(status.value, amount)) continue;
      const found = await this.client.findTransaction(requestId);
      if (found.queryStatus === 'Success' && sameNumber(found.destination ?? '', phoneNumber) && sameValue(found.value, amount)) {
        candidates.push({ requestId, found });
      }
    }
    if (candidates.length === 0) return;
    const alike = await this.requests.unidentifiedAlike(AFRICASTALKING, OPERATION, phoneNumber, request.amount);
    if (candidates.length > 1 || alike.length > 1) {
      this.logger.warn(
        `airtime top-up ${request.id}: ${candidates.length} transaction(s) and ${alike.length} top-up(s) of ours for ${phoneNumber}, ${amount}: not told apart, left for airtime:resolve`,
      );
      return;
    }
    const [{ requestId, found }] = candidates;
    this.logger.log(`airtime top-up ${request.id}, whose send answer was lost, is Africa's Talking's ${requestId}`);
    await this.requests.recordSend(request, 'SENT', { operatorRequestId: requestId, error: null });
    const known = this.foundAnswer(request, requestId, found);
    if (known) await this.requests.answer(request, known);
  }

  /** query/transaction/find's answer as an outcome: null while under way, not found, or in words we do not know. */
  private foundAnswer(request: RailRequestRow, requestId: string, found: FoundTransaction): RailAnswer | null {
    if (found.queryStatus === 'Failed') return null;
    if (found.queryStatus !== 'Success') {
      this.unknownWord('find', found.queryStatus, request);
      return null;
    }
    const known = statusAnswer(requestId, found.status, found.description);
    if (known === null) this.unknownWord('find', found.status, request);
    return known === 'UNDER_WAY' ? null : known;
  }

  /** A word of Africa's Talking we have no meaning for: logged, counted, the top-up kept held and asked about again. */
  unknownWord(call: string, word: string | null, request: RailRequestRow | null): void {
    this.metrics.railUnknownAnswer('airtime', call);
    this.logger.warn(`Africa's Talking ${call} answered "${word}"${request ? ` for top-up ${request.id}` : ''}: not understood, kept held`);
  }
}

function refusal(code: string, reason: string): RailAnswer {
  return { outcome: 'FAILED', resultCode: code, description: `Africa's Talking did not top up the number: ${reason}`, receipt: null };
}

/** Its idempotency check's answer: the same key was sent before, so that earlier call's fate is this one's. */
const duplicate = (reason: string) => /duplicate/i.test(reason);

/** How the request's call left, when it did. */
function sentCall(request: RailRequestRow): SentCall | null {
  const call = (request.request as { call?: SentCall }).call;
  return call?.members && call.sentAt ? call : null;
}

/** The same key for the same top-ups, so a repeated call is recognised by Africa's Talking as one. */
function idempotencyKeyOf(ids: string[]): string {
  return createHash('sha256').update(ids.join(',')).digest('hex').slice(0, 32);
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
