import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EngineMetrics } from '../../infra/metrics/engine-metrics';
import { RailRequestRow, RailRequestsRepository } from '../rail-requests.repository';
import { AFRICASTALKING, sameNumber, sameValue, STATUS_CALLBACK, statusAnswer } from './africastalking-gateway';

export type StatusVerdict = 'malformed' | 'APPLIED' | 'REPEATED' | 'UNMATCHED';

/**
 * A status callback as documented: `requestId` and `status` always (docs.africastalking.com/airtime/statuscallback);
 * the help centre's fuller form adds the number, value and description.
 */
interface AirtimeStatus {
  requestId: string;
  status: string;
  phoneNumber: string | null;
  value: string | null;
  description: string | null;
}

/**
 * Africa's Talking's airtime status callbacks. It signs nothing, so a callback is believed only about a top-up it
 * took from us: the requestId it answered our authenticated send with (and that top-up's number and value, when the
 * callback carries them). Every callback is kept raw; the first final status wins and queues the recipient's
 * booking in the same transaction, so duplicates and late or out-of-order callbacks change nothing twice. One that
 * names a requestId we do not know is kept UNMATCHED, and the top-ups whose send answer was lost are asked about
 * now: reconciliation recognises one in it through Africa's Talking's own record (AfricasTalkingGateway).
 */
@Injectable()
export class AfricasTalkingCallbacksService {
  private readonly logger = new Logger('AfricasTalkingCallbacks');

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly requests: RailRequestsRepository,
    private readonly metrics: EngineMetrics,
  ) {}

  async receive(sourceAddress: string, body: unknown): Promise<StatusVerdict> {
    const status = readStatus(body);
    if (!status) return 'malformed';
    const request = await this.requests.byOperatorRequestId(AFRICASTALKING, status.requestId);
    const answer = statusAnswer(status.requestId, status.status, status.description);
    if (!request || !sameTopUp(request, status) || answer === null || answer === 'UNDER_WAY') {
      await this.requests.keepCallback(null, AFRICASTALKING, STATUS_CALLBACK, request, sourceAddress, body, 'UNMATCHED');
      if (answer === null) {
        // A word we do not know: the top-up stays held and query/transaction/find is asked again.
        this.metrics.railUnknownAnswer('airtime', 'status-callback');
        this.logger.warn(`airtime status "${status.status}" for ${status.requestId}: not understood, kept held`);
      } else if (!request) {
        this.logger.warn(`airtime status for ${status.requestId} matches no top-up of ours with its id`);
        await this.requests.askUnidentifiedNow(AFRICASTALKING, 'AIRTIME');
      }
      return 'UNMATCHED';
    }
    return this.db.transaction(async (manager) => {
      const effect = (await this.requests.answer(request, answer, manager)) ? 'APPLIED' : 'REPEATED';
      await this.requests.keepCallback(manager, AFRICASTALKING, STATUS_CALLBACK, request, sourceAddress, body, effect);
      return effect;
    });
  }
}

/** The documented fields of a status callback (form or JSON), or null when it is not one. */
function readStatus(body: unknown): AirtimeStatus | null {
  if (!body || typeof body !== 'object') return null;
  const fields = body as Record<string, unknown>;
  const field = (name: string) => (typeof fields[name] === 'string' && fields[name] !== '' ? (fields[name] as string) : null);
  const [requestId, status] = [field('requestId'), field('status')];
  if (!requestId || !status) return null;
  return { requestId, status, phoneNumber: field('phoneNumber'), value: field('value'), description: field('description') };
}

/** The callback's number and value, where it names them, are the top-up's. */
function sameTopUp(request: RailRequestRow, status: AirtimeStatus): boolean {
  return (
    (status.phoneNumber === null || sameNumber(String(request.request.body.phoneNumber), status.phoneNumber)) &&
    (status.value === null || sameValue(String(request.request.body.amount), status.value))
  );
}
