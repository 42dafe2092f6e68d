import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { EntryBuilder } from '../ledger/entry-builder';
import { LedgerService } from '../ledger/ledger.service';
import { MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../rails/mobile-money.rail';
import { PAYMENT_STATUS, PaymentRow } from './payment';
import { PaymentsRepository } from './payments.repository';
import { PaymentsService } from './payments.service';

/**
 * Settles a payment with the operator's result (worker). Safe to run any number of times: only a pending payment
 * moves, under its row lock, and the money entry, the new status and the callbacks commit together.
 */
@Injectable()
export class PaymentSettlementService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(MOBILE_MONEY_RAIL) private readonly rail: MobileMoneyRail,
    private readonly ledger: LedgerService,
    private readonly payments: PaymentsRepository,
    private readonly outcomes: PaymentsService,
  ) {}

  async settle(paymentId: string): Promise<void> {
    const pending = await this.payments.find(this.db.manager, paymentId);
    if (!pending || !awaitsOperator(pending)) return;
    const outcome = await this.rail.outcomeOf({
      paymentId,
      payerMsisdn: pending.payer_msisdn,
      amount: pending.total_amount,
      currency: pending.currency,
    });
    if (outcome.status === 'PENDING') return; // stays 703 until the operator answers

    await this.db.transaction(async (manager) => {
      const payment = await this.payments.byId(manager, pending.client_id, paymentId, true);
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

/** Pending with the operator: not final, not jammed, and past the OTP step when there is one. */
function awaitsOperator(payment: PaymentRow): boolean {
  return payment.payment_status === PAYMENT_STATUS.PENDING && (payment.next_step !== 'VERIFY_OTP' || payment.otp_verified_at !== null);
}
