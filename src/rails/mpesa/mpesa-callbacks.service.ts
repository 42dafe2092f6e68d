import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EngineMetrics } from '../../infra/metrics/engine-metrics';
import { RailAnswer, RailRequestRow, RailRequestsRepository } from '../rail-requests.repository';
import { addressAllowed } from './address-allow-list';
import { DarajaResultInbox } from './daraja-result-inbox';
import { MOBILE_MONEY_RAIL_NAME, MPESA, MpesaCallbackKind, MpesaGateway } from './mpesa-gateway';
import {
  DarajaResult,
  readResult,
  readStkCallback,
  REVERSED_ALREADY,
  statusAnswer,
  transactionAnswer,
  UNKNOWN_TO_OPERATOR,
} from './mpesa-results';

/** What a callback was found to be; `forbidden` and `unknown` are answered 403 and 404 and change nothing. */
export type CallbackVerdict = 'forbidden' | 'unknown' | 'malformed' | 'APPLIED' | 'REPEATED' | 'UNMATCHED';

export const CALLBACK_KINDS: MpesaCallbackKind[] = ['stk', 'result', 'timeout', 'status', 'status-timeout'];
/** Results of the reconciliation's queries, handed to the query awaiting them rather than to a rail request. */
const QUERY_KINDS: MpesaCallbackKind[] = ['query-result', 'query-timeout'];

/**
 * Daraja's callbacks. Daraja signs nothing, so a callback is believed only from an allowed address, on our
 * unguessable path, about a request we made, with that request's identifiers. Every believed callback is kept raw;
 * the first final answer wins and queues the subject's follow-up in the same transaction, so duplicates and late or
 * out-of-order results change nothing twice.
 */
@Injectable()
export class MpesaCallbacksService {
  private readonly logger = new Logger('MpesaCallbacks');

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly gateway: MpesaGateway,
    private readonly requests: RailRequestsRepository,
    private readonly metrics: EngineMetrics,
    private readonly inbox: DarajaResultInbox,
  ) {}

  async receive(token: string, kind: string, requestId: string, sourceAddress: string, body: unknown): Promise<CallbackVerdict> {
    if (!addressAllowed(sourceAddress, this.gateway.config.allowedAddresses)) {
      this.logger.warn(`M-Pesa callback refused from ${sourceAddress}: not on MPESA_ALLOWED_IPS`);
      return 'forbidden';
    }
    if (!sameToken(token, this.gateway.callbackToken)) return 'unknown';
    if (kind === 'pull') return 'APPLIED'; // the Pull registration's notice: nothing to act on
    if (QUERY_KINDS.includes(kind as MpesaCallbackKind)) return this.queryResult(kind, requestId, body);
    if (!CALLBACK_KINDS.includes(kind as MpesaCallbackKind)) return 'unknown';
    const request = /^[0-9a-f-]{36}$/i.test(requestId) ? await this.requests.byId(requestId) : null;
    const reading = read(kind as MpesaCallbackKind, body, request);
    if (reading === 'malformed') return 'malformed';
    if (!request || reading === 'mismatch') {
      await this.requests.keepCallback(null, MPESA, kind, request, sourceAddress, body, 'UNMATCHED');
      this.logger.warn(`M-Pesa ${kind} callback for ${requestId} matches no request of ours`);
      return 'UNMATCHED';
    }
    if (reading.unknown) {
      // Not an outcome: the request stays held, and its status is asked for again.
      this.logger.warn(`M-Pesa ${kind} callback for ${request.id} answers ${reading.unknown}, which we do not know: asked about again`);
      this.metrics.railUnknownAnswer(MOBILE_MONEY_RAIL_NAME, `${kind}_callback`);
    }
    if (reading.held) this.logger.warn(`M-Pesa ${kind} callback for ${request.id}: ${reading.held}; the request stays held`);
    return this.db.transaction(async (manager) => {
      let effect: 'APPLIED' | 'REPEATED' = 'REPEATED';
      if (reading.checkoutRequestId && !request.operator_request_id) {
        // The push's own answer was lost: its callback tells us Daraja's id for it.
        await manager.query(
          `UPDATE rail_requests SET operator_request_id = $2 WHERE client_id = $3 AND id = $1 AND operator_request_id IS NULL`,
          [request.id, reading.checkoutRequestId, request.client_id],
        );
      }
      if (reading.answer && (await this.requests.answer(request, reading.answer, manager))) effect = 'APPLIED';
      if (reading.notTaken && request.operation === 'B2C') {
        // M-Pesa never took a B2C whose answer we lost (or never saw leave): it may be sent again under the same
        // OriginatorConversationID, which M-Pesa itself refuses to take twice.
        await manager.query(
          `UPDATE rail_requests SET state = 'BUSY', next_query_at = now(), last_error = 'not known to M-Pesa: sent again'
           WHERE client_id = $2 AND id = $1 AND outcome IS NULL AND state IN ('SENDING', 'UNKNOWN')`,
          [request.id, request.client_id],
        );
      }
      if (reading.askNow) {
        // A queue time-out or a result code we do not know is not an outcome: the request is asked about at once.
        await manager.query(
          `UPDATE rail_requests SET next_query_at = now() WHERE client_id = $2 AND id = $1 AND (outcome IS NULL OR outcome = 'JAMMED')`,
          [request.id, request.client_id],
        );
      }
      await this.requests.keepCallback(manager, MPESA, kind, request, sourceAddress, body, effect);
      return effect;
    });
  }

  /** A result of a reconciliation query: handed to the query awaiting it, or unknown once none does. */
  private async queryResult(kind: string, queryId: string, body: unknown): Promise<CallbackVerdict> {
    if (!/^[0-9a-f-]{36}$/i.test(queryId)) return 'unknown';
    if (kind === 'query-result' && !readResult(body)) return 'malformed';
    const delivered = await this.inbox.deliver(queryId, kind === 'query-timeout' ? { timedOut: true, body } : body);
    if (!delivered) this.logger.warn(`M-Pesa ${kind} callback for ${queryId}: no query awaits it (unknown, or past its time limit)`);
    return delivered ? 'APPLIED' : 'unknown';
  }
}

interface Reading {
  answer: RailAnswer | null;
  notTaken?: boolean;
  checkoutRequestId?: string;
  askNow?: boolean;
  /** A result code or status word we do not know. */
  unknown?: string;
  /** A documented answer that is no outcome of ours (a payment already reversed by someone else). */
  held?: string;
}

/** What a callback says about its request; 'mismatch' when its identifiers are another request's. */
function read(kind: MpesaCallbackKind, body: unknown, request: RailRequestRow | null): Reading | 'malformed' | 'mismatch' {
  if (kind === 'stk') {
    const stk = readStkCallback(body);
    if (!stk) return 'malformed';
    if (
      request &&
      (request.operation !== 'STK_PUSH' || (request.operator_request_id && request.operator_request_id !== stk.checkoutRequestId))
    ) {
      return 'mismatch';
    }
    return { answer: stk.answer, checkoutRequestId: stk.checkoutRequestId, unknown: stk.answer ? undefined : `ResultCode ${stk.code}` };
  }
  const result = readResult(body);
  if (!result) return 'malformed';
  if (request && (request.operation === 'STK_PUSH' || !sameConversation(request, kind, result))) return 'mismatch';
  if (kind === 'timeout' || kind === 'status-timeout') return { answer: null, askNow: true };
  if (kind === 'status') {
    const answer = statusAnswer(result);
    if (answer === UNKNOWN_TO_OPERATOR) return { answer: null, notTaken: true };
    if ('notYet' in answer) {
      return answer.notYet === 'unknown'
        ? { answer: null, unknown: answer.word || 'no TransactionStatus' }
        : { answer: null, held: `the status query was refused (${answer.word})` };
    }
    return { answer };
  }
  const answer = transactionAnswer(result);
  if (answer) return { answer };
  if (result.code === REVERSED_ALREADY) return { answer: null, held: `${result.code} ${result.description}` };
  return { answer: null, unknown: `ResultCode ${result.code}`, askNow: true };
}

/** A result names its request by the conversation ids Daraja gave when it took it (our id, for a B2C). */
function sameConversation(request: RailRequestRow, kind: MpesaCallbackKind, result: DarajaResult): boolean {
  // A status query's result carries the query's own conversation, not the transaction's.
  if (kind === 'status' || kind === 'status-timeout') return true;
  const originator = request.operator_conversation_id ?? (request.operation === 'B2C' ? request.id : null);
  if (originator && result.originatorConversationId && originator !== result.originatorConversationId) return false;
  if (request.operator_request_id && result.conversationId && request.operator_request_id !== result.conversationId) return false;
  return true;
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
