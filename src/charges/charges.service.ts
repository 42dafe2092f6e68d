import { ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { CallbackResolver } from '../common/url-safety/pinned-post';
import { GatewayError } from '../common/errors/gateway-error';
import { formatAmount, Money } from '../common/money';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { SETTLE_PAYMENT_KEY, TOPICS } from '../infra/queue/queues';
import { RailHealth } from '../rails/rail-health';
import { MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../rails/mobile-money.rail';
import { requestFingerprint } from '../common/fingerprint';
import { ChargeRequestDto, VerifyOtpDto } from './charge.dto';
import { PaymentsRepository } from '../collections/payments.repository';
import { SplitSettlementsService } from '../split-settlements/split-settlements.service';
import { collectionRefusalError } from '../collections/collecting-service';
import { PAYMENT_STATUS, paymentResult, PaymentRow } from '../collections/payment';
import { PaymentsService } from '../collections/payments.service';
import { chargeAcceptance } from './charge-acceptance';

const MAX_OTP_FAILURES = 4;

/** Direct mobile-money charges: acceptance, OTP verification and status (collection document §2–§4). */
@Injectable()
export class ChargesService {
  private readonly acceptance: ReturnType<typeof chargeAcceptance>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(MOBILE_MONEY_RAIL) private readonly rail: MobileMoneyRail,
    private readonly splits: SplitSettlementsService,
    private readonly payments: PaymentsRepository,
    private readonly outcomes: PaymentsService,
    private readonly resolver: CallbackResolver,
    private readonly health: RailHealth,
  ) {
    this.acceptance = chargeAcceptance(db);
  }

  /**
   * Accepts a charge: one database call, shared with the charges accepted at the same moment (group commit), checks
   * it, records it with its settlement job, and answers at once.
   * Idempotent on external_reference: a replay returns the original response, another body is a 409.
   */
  async accept(principal: GatewayPrincipal, dto: ChargeRequestDto) {
    if (dto.client_code !== principal.clientCode) throw new ForbiddenException('client_code does not belong to the authenticated client');
    const amount = new Money(dto.amount).toFixed();
    const transactionCharge = new Money(dto.transaction_charge).toFixed();
    const fingerprint = requestFingerprint('CHARGE', { ...dto, amount, transaction_charge: transactionCharge });
    const urlProblem = await this.resolver.entryProblem(dto.callback_url, this.config.isSandbox);
    const splits = this.splits.read(dto.extra_data);
    const requestError = urlProblem ? GatewayError.validation(`callback_url ${urlProblem}`) : splits.error;
    const payerPays = new Money(amount).plus(dto.add_transaction_charge ? transactionCharge : 0).toFixed();
    const railProblem = this.rail.amountProblem(payerPays, dto.currency_code);
    if (railProblem) throw GatewayError.validation(railProblem);
    const down = await this.health.refusal(this.rail.operator);
    if (down) throw GatewayError.unavailable(down);
    const challenge = this.rail.challengeFor({
      paymentId: '',
      clientId: principal.clientId,
      payerMsisdn: dto.payer_msisdn,
      amount: payerPays,
      currency: dto.currency_code,
    });
    const answer = await this.acceptance.call(principal.clientId, {
      service_code: dto.service_code,
      fingerprint,
      caller_check: urlProblem ? 'REQUEST' : splits.error ? 'SPLITS' : null,
      charge: {
        external_reference: dto.external_reference,
        origin_channel_code: dto.origin_channel_code,
        originator_msisdn: dto.originator_msisdn,
        payer_msisdn: dto.payer_msisdn,
        payer_name: dto.payer_name ?? null,
        payer_email: dto.payer_email,
        account_number: dto.account_number,
        invoice_number: dto.invoice_number,
        currency: dto.currency_code,
        country_code: dto.country_code,
        service_amount: amount,
        transaction_charge: dto.add_transaction_charge ? transactionCharge : '0',
        add_transaction_charge: dto.add_transaction_charge,
        payment_method_code: dto.payment_method_code,
        extra_data: dto.extra_data,
        description: dto.description,
        notify_client: dto.notify_client,
        notify_originator: dto.notify_originator,
        callback_url: dto.callback_url,
        next_step: challenge === 'NONE' ? null : challenge,
      },
      splits: splits.items,
      payment_url_prefix: `${this.config.publicBaseUrl}/checkout/authorize/`,
      settle_topic: TOPICS.settlePayment,
      settle_key: SETTLE_PAYMENT_KEY,
      settle_at: new Date(Date.now() + this.rail.settleDelayMs()),
    });
    if (answer.outcome === 'REFUSED') {
      throw collectionRefusalError(answer.refusal, dto.service_code, requestError, (refusal) => this.splits.refusalError(refusal));
    }
    if (answer.outcome === 'CONFLICT') throw GatewayError.duplicate('external_reference');
    return chargeResponse({ ...answer, external_reference: dto.external_reference });
  }

  async verifyOtp(principal: GatewayPrincipal, { reference, otp }: VerifyOtpDto) {
    return this.db.transaction(async (manager) => {
      const payment = await this.payments.byChargeReference(manager, principal.clientId, reference, true);
      if (!payment) throw GatewayError.notFound();
      if (payment.next_step !== 'VERIFY_OTP') throw GatewayError.validation('This charge does not take an OTP');
      if (payment.otp_verified_at) return otpAnswer(reference, 'SUCCESSFUL', 'OTP already verified; the payment is being processed');
      if (payment.payment_status !== PAYMENT_STATUS.PENDING) return otpAnswer(reference, 'FAILED', 'The payment has failed');

      const charge = {
        paymentId: payment.id,
        clientId: payment.client_id,
        payerMsisdn: payment.payer_msisdn,
        amount: payment.total_amount,
        currency: payment.currency,
      };
      if (await this.rail.verifyOtp(charge, otp)) {
        await this.outcomes.otpVerified(manager, payment);
        return otpAnswer(reference, 'SUCCESSFUL', 'OTP verified; the result will be sent to the callback URL');
      }
      const failures = payment.otp_failures + 1;
      await this.outcomes.otpRejected(manager, payment, failures);
      if (failures >= MAX_OTP_FAILURES) {
        // A failure is final: it is dated (settled_at) like an operator's failure, and the callback carries that date.
        await this.outcomes.fail(manager, payment);
        return otpAnswer(reference, 'FAILED', 'Too many invalid OTP attempts; the payment has failed');
      }
      const remaining = MAX_OTP_FAILURES - failures;
      return {
        ...otpAnswer(reference, 'OTP_INVALID', `Invalid OTP. ${remaining} attempts remaining`),
        attempts_remaining: remaining,
      };
    });
  }

  async status(principal: GatewayPrincipal, chargeRequestId: string) {
    const payment = /^\d{1,18}$/.test(chargeRequestId)
      ? await this.payments.byId(this.db.manager, principal.clientId, chargeRequestId)
      : null;
    if (!payment) throw GatewayError.notFound();
    return paymentResult(payment);
  }
}

function otpAnswer(reference: string, status: 'SUCCESSFUL' | 'OTP_INVALID' | 'FAILED', description: string) {
  return { reference, status, description };
}

/** The charge acceptance response (collection document §2). */
function chargeResponse(
  payment: Pick<
    PaymentRow,
    'id' | 'service_amount' | 'transaction_charge' | 'total_amount' | 'external_reference' | 'payment_url' | 'next_step'
  >,
) {
  return {
    status_code: 176,
    status_description: 'Charge posted successfully',
    total_amount: formatAmount(payment.total_amount),
    service_amount: formatAmount(payment.service_amount),
    transaction_charge: formatAmount(payment.transaction_charge),
    charge_request_id: Number(payment.id),
    external_reference: payment.external_reference,
    payment_url: payment.payment_url,
    next_step: payment.next_step,
  };
}
