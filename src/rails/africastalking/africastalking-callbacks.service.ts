import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RailRequestRow, RailRequestsRepository } from '../rail-requests.repository';
import { AFRICASTALKING, airtimeValue, sameNumber, statusAnswer } from './africastalking-gateway';

export type StatusVerdict = 'malformed' | 'APPLIED' | 'REPEATED' | 'UNMATCHED';

interface AirtimeStatus {
  requestId: string;
  phoneNumber: string;
  status: 'Success' | 'Failed';
  value: string;
  description: string | null;
}

/**
 * Africa's Talking's airtime status callbacks. It signs nothing, so a callback is believed only about a top-up it
 * took from us: the requestId it answered our authenticated send with, and that top-up's number and value. Every
 * callback is kept raw; the first final status wins and queues the recipient's booking in the same transaction, so
 * duplicates and late or out-of-order callbacks change nothing twice.
 */
@Injectable()
export class AfricasTalkingCallbacksService {
  private readonly logger = new Logger('AfricasTalkingCallbacks');

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly requests: RailRequestsRepository,
  ) {}

  async receive(sourceAddress: string, body: unknown): Promise<StatusVerdict> {
    const status = readStatus(body);
    if (!status) return 'malformed';
    const request = await this.requests.byOperatorRequestId(AFRICASTALKING, status.requestId);
    if (!request || !sameTopUp(request, status)) {
      await this.requests.keepCallback(null, AFRICASTALKING, 'airtime-status', request?.id ?? null, sourceAddress, body, 'UNMATCHED');
      this.logger.warn(`airtime status for ${status.requestId} matches no top-up of ours`);
      return 'UNMATCHED';
    }
    return this.db.transaction(async (manager) => {
      const answer = statusAnswer(status.requestId, status.status, status.description)!;
      const effect = (await this.requests.answer(request.id, answer, manager)) ? 'APPLIED' : 'REPEATED';
      await this.requests.keepCallback(manager, AFRICASTALKING, 'airtime-status', request.id, sourceAddress, body, effect);
      return effect;
    });
  }
}

/** The documented fields of a status callback (JSON or form), or null when it is not one. */
function readStatus(body: unknown): AirtimeStatus | null {
  if (!body || typeof body !== 'object') return null;
  const fields = body as Record<string, unknown>;
  const field = (name: string) => (typeof fields[name] === 'string' && fields[name] !== '' ? (fields[name] as string) : null);
  const [requestId, phoneNumber, status, value] = ['requestId', 'phoneNumber', 'status', 'value'].map(field);
  if (!requestId || !phoneNumber || !value || (status !== 'Success' && status !== 'Failed')) return null;
  return { requestId, phoneNumber, status, value, description: field('description') };
}

/** The callback's number and value are the top-up's (the value compared as a decimal: "KES 100" is "KES 100.0000"). */
function sameTopUp(request: RailRequestRow, status: AirtimeStatus): boolean {
  const sent = airtimeValue(String(request.request.body.amount));
  const told = airtimeValue(status.value);
  return (
    sameNumber(String(request.request.body.phoneNumber), status.phoneNumber) &&
    !!sent &&
    !!told &&
    sent.currency === told.currency &&
    sent.amount.eq(told.amount)
  );
}
