import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GroupCommit } from '../infra/database/group-commit';
import { PostingLane } from '../infra/database/posting-lane';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { ledgerError } from '../ledger/ledger.service';
import { ChargeOutcome, MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../rails/mobile-money.rail';
import { PAYMENT_STATUS, paymentResult, PaymentResultBody, PaymentRow } from './payment';
import { PaymentsRepository } from './payments.repository';

/** A payment's operator result, as collection_settle_payments takes it, with the payment callback it announces. */
export interface OperatorResult {
  payment_id: string;
  outcome: 'SUCCEEDED' | 'FAILED' | 'JAMMED';
  payer_transaction_id: string | null;
  /** ISO 8601. */
  settled_at: string;
  /** A direct charge's result callback; null for a checkout's payment (its session calls back) and a jammed one. */
  payload: PaymentResultBody | null;
  /** OPERATOR: a person's resolution from the operator's evidence, the only result a jammed payment takes. */
  resolution?: 'OPERATOR';
}

/** A person's resolution of a charge that cannot be made: unknown charge, one not jammed, or evidence missing. */
export class ChargeResolutionError extends Error {}

/** collection_settle_payments' answer for one item: SETTLED, SKIPPED, or FAILED with the error that failed it. */
export interface SettlementAnswer {
  payment_id: string;
  result: 'SETTLED' | 'SKIPPED' | 'FAILED';
  error_code: string | null;
  error_message: string | null;
  error_detail: string | null;
}

const SETTLE_PAYMENTS: PreparedStatement = {
  name: 'collection_settle_payments',
  text: 'SELECT * FROM collection_settle_payments(p_client_id => $1, p_items => $2)',
};

/**
 * collection_settle_payments (src/collections/sql/collection_settle_payments.sql): settles a group of one client's
 * operator results in one call, one answer per item in the items' order.
 */
export function settlePayments(db: DataSource, clientId: string, items: OperatorResult[]): Promise<SettlementAnswer[]> {
  return runPrepared<SettlementAnswer>(db, SETTLE_PAYMENTS, [clientId, JSON.stringify(items)]);
}

/** An operator result with the client whose payment it settles: a call settles one client's. */
interface ClientResult {
  clientId: string;
  result: OperatorResult;
}

/** Batches of concurrent jobs in one worker process: one call per batch, two batches out at most. */
const BATCHES = { maxItems: 100, maxInFlight: 2 };

/**
 * Settles a payment with the operator's result (worker). Safe to run any number of times: only a pending payment
 * moves, under its row lock, and the money entry, the new status and the callbacks commit together.
 *
 * Settlement is by group commit: the payments that concurrent jobs read, and then their results, go to the
 * database as one call per batch (collection_settle_payments), which handles each payment on its own and holds
 * the merchant's hot accounts (in-flight, settlement wallet, fee income) once per batch rather than once per
 * payment. A hosted checkout's session follows its payments in the same call, once per batch, with its checkout
 * callback built there.
 */
@Injectable()
export class PaymentSettlementService {
  private readonly reads = new GroupCommit<string, PaymentRow | null>(async (ids) => {
    const rows = await this.payments.findMany(this.db, ids);
    return ids.map((id) => rows.find((row) => row.id === id) ?? null);
  }, BATCHES);

  private readonly settlements = new GroupCommit<ClientResult, SettlementAnswer>(
    (items) =>
      this.lane.run(() =>
        settlePayments(
          this.db,
          items[0].clientId,
          items.map((item) => item.result),
        ),
      ),
    { ...BATCHES, laneOf: (item) => item.clientId },
  );

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(MOBILE_MONEY_RAIL) private readonly rail: MobileMoneyRail,
    private readonly payments: PaymentsRepository,
    private readonly lane: PostingLane,
  ) {}

  async settle(paymentId: string): Promise<void> {
    const pending = await this.reads.submit(paymentId);
    if (!pending || !awaitsOperator(pending)) return;
    const outcome = await this.rail.outcomeOf({
      paymentId,
      clientId: pending.client_id,
      payerMsisdn: pending.payer_msisdn,
      amount: pending.total_amount,
      currency: pending.currency,
    });
    if (outcome.status === 'PENDING') return; // stays 703 until the operator answers

    const answer = await this.settlements.submit({ clientId: pending.client_id, result: operatorResult(pending, outcome) });
    // Only this payment failed (its entry was refused): its job fails and is retried, as a failed transaction was.
    if (answer.result === 'FAILED') {
      throw ledgerError(
        Object.assign(new Error(answer.error_message ?? 'settlement failed'), { code: answer.error_code, detail: answer.error_detail }),
      );
    }
  }

  /**
   * A jammed charge (704) finished by a person from the operator's evidence (charge:resolve): SUCCESSFUL with the
   * operator's receipt settles it as its callback would have (one entry, the merchant's callback), FAILED moves no
   * money. Any other status is refused: a pending charge is still the operator's to answer.
   */
  async resolveByOperator(
    clientId: string,
    paymentId: string,
    resolution: 'SUCCESSFUL' | 'FAILED',
    receipt: string | null,
  ): Promise<PaymentRow> {
    const payment = await this.payments.byId(this.db.manager, clientId, paymentId);
    if (!payment) throw new ChargeResolutionError(`charge ${paymentId} not found for this client`);
    if (payment.payment_status !== PAYMENT_STATUS.JAMMED)
      throw new ChargeResolutionError(
        `charge ${paymentId} is not jammed (status ${payment.payment_status}): only a jammed charge is resolved by hand`,
      );
    if (resolution === 'SUCCESSFUL' && !receipt)
      throw new ChargeResolutionError("--receipt (the operator's receipt) is required with SUCCESSFUL");
    if (resolution === 'FAILED' && receipt) throw new ChargeResolutionError('--receipt goes with SUCCESSFUL only');
    const outcome: Exclude<ChargeOutcome, { status: 'PENDING' }> =
      resolution === 'SUCCESSFUL'
        ? { status: 'SUCCEEDED', operatorReference: receipt! }
        : { status: 'FAILED', reason: 'Failed (resolved by operator)' };
    const answer = await this.settlements.submit({
      clientId: payment.client_id,
      result: { ...operatorResult(payment, outcome), resolution: 'OPERATOR' },
    });
    if (answer.result === 'FAILED') {
      throw ledgerError(
        Object.assign(new Error(answer.error_message ?? 'settlement failed'), { code: answer.error_code, detail: answer.error_detail }),
      );
    }
    if (answer.result === 'SKIPPED') throw new ChargeResolutionError(`charge ${paymentId} was finished meanwhile`);
    return (await this.payments.byId(this.db.manager, clientId, paymentId))!;
  }
}

/**
 * A payment's result with its callback, frozen now: the settlement time is taken here so a direct charge's
 * callback payment_date and the stored settled_at are the same instant.
 */
function operatorResult(payment: PaymentRow, outcome: Exclude<ChargeOutcome, { status: 'PENDING' }>): OperatorResult {
  const settledAt = new Date();
  const payerTransactionId = outcome.status === 'SUCCEEDED' ? outcome.operatorReference : null;
  // A checkout's payment announces nothing itself (its session calls back in the checkout shape), nor does a jammed one.
  const payload =
    payment.checkout_session_id === null && outcome.status !== 'JAMMED'
      ? paymentResult({
          ...payment,
          payment_status: outcome.status === 'SUCCEEDED' ? PAYMENT_STATUS.SUCCESSFUL : PAYMENT_STATUS.FAILED,
          payer_transaction_id: payerTransactionId ?? payment.payer_transaction_id,
          settled_at: settledAt,
        })
      : null;
  return {
    payment_id: payment.id,
    outcome: outcome.status,
    payer_transaction_id: payerTransactionId,
    settled_at: settledAt.toISOString(),
    payload,
  };
}

/** Pending with the operator: not final, not jammed, and past the OTP step when there is one. */
function awaitsOperator(payment: PaymentRow): boolean {
  return payment.payment_status === PAYMENT_STATUS.PENDING && (payment.next_step !== 'VERIFY_OTP' || payment.otp_verified_at !== null);
}
