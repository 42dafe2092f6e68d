import type { OperatorBalance, OperatorMovement, OperatorStatement, OurMovement } from '../operator-statement';
import { mapLimited } from '../map-limited';
import type { AfricasTalkingClient } from './africastalking.client';
import { airtimeValue, statusAnswer } from './africastalking-gateway';

/** Finds in flight at once. */
const FIND_CONCURRENCY = 8;

/**
 * What Africa's Talking says of our airtime: it lists no airtime transactions, so each top-up of ours it gave an id
 * (its requestId) is looked up by query/transaction/find; a top-up made only at Africa's Talking cannot be listed,
 * and one it never gave us an id for cannot be asked about (docs/rails.md). The balance is the application's
 * ("Application Data"). A find that fails throws: the listing is never returned short.
 */
export class AfricasTalkingStatement implements OperatorStatement {
  readonly rail = 'africastalking' as const;

  constructor(private readonly client: AfricasTalkingClient) {}

  async movements(_period: unknown, ours: readonly OurMovement[]): Promise<OperatorMovement[]> {
    const asked = ours.filter((movement) => movement.kind === 'AIRTIME' && movement.operatorReference);
    const found = await mapLimited(asked, FIND_CONCURRENCY, (movement) => this.find(movement));
    return found.filter((movement): movement is OperatorMovement => movement !== null);
  }

  async balance(): Promise<OperatorBalance> {
    const { balance, answer } = await this.client.applicationBalance();
    const value = airtimeValue(balance ?? '');
    if (!value) throw new Error(`Africa's Talking answered no readable application balance: ${JSON.stringify(answer)}`);
    return { amount: value.amount, currency: value.currency, at: new Date(), evidence: { answer } };
  }

  /** One top-up as Africa's Talking holds it; null when it does not find it (its answer's status "Failed"). */
  private async find(ours: OurMovement): Promise<OperatorMovement | null> {
    const transactionId = ours.operatorReference!;
    const found = await this.client.findTransaction(transactionId);
    if (found.queryStatus !== 'Success') return null;
    const value = airtimeValue(found.value ?? '');
    if (!value) throw new Error(`Africa's Talking found ${transactionId} without a readable value: ${JSON.stringify(found.answer)}`);
    const answer = statusAnswer(transactionId, found.status, found.description);
    const at = Date.parse(found.transactionDate ?? '');
    return {
      operatorReference: transactionId,
      ourReference: null,
      counterparty: found.destination,
      amount: value.amount,
      currency: value.currency,
      direction: 'OUT',
      status: answer === 'UNDER_WAY' || answer === null ? 'PENDING' : answer.outcome === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED',
      at: Number.isNaN(at) ? ours.at : new Date(at),
      evidence: { query: 'query/transaction/find', answer: found.answer },
    };
  }
}
