import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { GroupCommit } from '../infra/database/group-commit';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { EntryBuilder } from '../ledger/entry-builder';
import { ledgerError, LedgerService } from '../ledger/ledger.service';
import { ChargeOutcome, MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../rails/mobile-money.rail';
import { PAYMENT_STATUS, paymentResult, PaymentRow } from './payment';
import { PaymentsRepository } from './payments.repository';
import { PaymentsService } from './payments.service';

/** A direct charge's operator result, as collection_settle_payments takes it, with the callback it announces. */
interface ChargeSettlement {
  payment_id: string;
  outcome: 'SUCCEEDED' | 'FAILED' | 'JAMMED';
  payer_transaction_id: string | null;
  settled_at: string;
  event: string | null;
  payload: ReturnType<typeof paymentResult> | null;
}

interface SettlementAnswer {
  payment_id: string;
  result: 'SETTLED' | 'SKIPPED' | 'FAILED';
  error_code: string | null;
  error_message: string | null;
  error_detail: string | null;
}

const SETTLE_PAYMENTS: PreparedStatement = {
  name: 'collection_settle_payments',
  text: 'SELECT * FROM collection_settle_payments($1)',
};

/** Batches of concurrent jobs in one worker process: one call per batch, two batches out at most. */
const BATCHES = { maxItems: 100, maxInFlight: 2 };

/**
 * Settles a payment with the operator's result (worker). Safe to run any number of times: only a pending payment
 * moves, under its row lock, and the money entry, the new status and the callbacks commit together.
 *
 * Direct charges are settled by group commit: the payments that concurrent jobs read, and then their results, go
 * to the database as one call per batch (collection_settle_payments), which handles each payment on its own and
 * holds the merchant's hot accounts (in-flight, settlement wallet, fee income) once per batch rather than once per
 * payment. A payment of a hosted checkout also moves its session, in a transaction of its own.
 */
@Injectable()
export class PaymentSettlementService {
  private readonly reads = new GroupCommit<string, PaymentRow | null>(async (ids) => {
    const rows = await this.payments.findMany(this.db, ids);
    return ids.map((id) => rows.find((row) => row.id === id) ?? null);
  }, BATCHES);

  private readonly charges = new GroupCommit<ChargeSettlement, SettlementAnswer>(
    (items) => runPrepared<SettlementAnswer>(this.db, SETTLE_PAYMENTS, [JSON.stringify(items)]),
    BATCHES,
  );

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(MOBILE_MONEY_RAIL) private readonly rail: MobileMoneyRail,
    private readonly ledger: LedgerService,
    private readonly payments: PaymentsRepository,
    private readonly outcomes: PaymentsService,
  ) {}

  async settle(paymentId: string): Promise<void> {
    const pending = await this.reads.submit(paymentId);
    if (!pending || !awaitsOperator(pending)) return;
    const outcome = await this.rail.outcomeOf({
      paymentId,
      payerMsisdn: pending.payer_msisdn,
      amount: pending.total_amount,
      currency: pending.currency,
    });
    if (outcome.status === 'PENDING') return; // stays 703 until the operator answers
    if (pending.checkout_session_id) return this.settleCheckoutPayment(pending, outcome);

    const answer = await this.charges.submit(chargeSettlement(pending, outcome));
    // Only this payment failed (its entry was refused): its job fails and is retried, as a failed transaction was.
    if (answer.result === 'FAILED') {
      throw ledgerError(
        Object.assign(new Error(answer.error_message ?? 'settlement failed'), { code: answer.error_code, detail: answer.error_detail }),
      );
    }
  }

  private async settleCheckoutPayment(pending: PaymentRow, outcome: Exclude<ChargeOutcome, { status: 'PENDING' }>): Promise<void> {
    await this.db.transaction(async (manager) => {
      const payment = await this.payments.byId(manager, pending.client_id, pending.id, true);
      if (!payment || !awaitsOperator(payment)) return;
      if (outcome.status === 'JAMMED') return this.outcomes.jam(manager, payment);
      if (outcome.status === 'FAILED') return this.outcomes.fail(manager, payment);
      const entryId = await this.postCollection(manager, payment);
      await this.outcomes.succeed(manager, payment, entryId, outcome.operatorReference);
    });
  }

  /**
   * The payer's money arrives from the operator (in-flight account) and lands in the service's settlement
   * wallet net of the merchant-borne fee; the payer's transaction charge and the fee go to fee income.
   * collection_settle_payments posts the same entry for a direct charge.
   */
  private async postCollection(manager: EntityManager, payment: PaymentRow): Promise<string> {
    const [service] = await manager.query(`SELECT settlement_account_id FROM client_services WHERE id = $1`, [payment.client_service_id]);
    const inFlight = await this.ledger.systemAccount(manager, payment.client_id, 'IN_FLIGHT_MOBILE_MONEY', payment.currency);
    const feeIncome = await this.ledger.systemAccount(manager, payment.client_id, 'FEE_INCOME', payment.currency);
    const entry = new EntryBuilder()
      .debit(inFlight.id, new Money(payment.total_amount))
      .credit(service.settlement_account_id, new Money(payment.service_amount).minus(payment.merchant_fee))
      .credit(feeIncome.id, new Money(payment.transaction_charge).plus(payment.merchant_fee));
    const posted = await this.ledger.postEntry(manager, { clientId: payment.client_id, kind: 'PAYMENT', lines: entry.lines() });
    return posted.entryId;
  }
}

/**
 * A direct charge's result with its callback, frozen now: the settlement time is taken here so the callback's
 * payment_date and the stored settled_at are the same instant.
 */
function chargeSettlement(payment: PaymentRow, outcome: Exclude<ChargeOutcome, { status: 'PENDING' }>): ChargeSettlement {
  const settledAt = new Date();
  const settled =
    outcome.status === 'SUCCEEDED'
      ? { ...payment, payment_status: PAYMENT_STATUS.SUCCESSFUL, payer_transaction_id: outcome.operatorReference, settled_at: settledAt }
      : outcome.status === 'FAILED'
        ? { ...payment, payment_status: PAYMENT_STATUS.FAILED, settled_at: settledAt }
        : null;
  const payload = settled && paymentResult(settled);
  return {
    payment_id: payment.id,
    outcome: outcome.status,
    payer_transaction_id: outcome.status === 'SUCCEEDED' ? outcome.operatorReference : null,
    settled_at: settledAt.toISOString(),
    event: payload?.event ?? null,
    payload,
  };
}

/** Pending with the operator: not final, not jammed, and past the OTP step when there is one. */
function awaitsOperator(payment: PaymentRow): boolean {
  return payment.payment_status === PAYMENT_STATUS.PENDING && (payment.next_step !== 'VERIFY_OTP' || payment.otp_verified_at !== null);
}
