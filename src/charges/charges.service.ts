import { ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { CallbackResolver } from '../callbacks/pinned-post';
import { ClientServicesService } from '../client-services/client-services.service';
import { feeFor } from '../client-services/fees';
import { GATEWAY_CODES, GatewayError } from '../common/errors/gateway-error';
import { formatAmount, Money } from '../common/money';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../rails/mobile-money.rail';
import { requestFingerprint } from '../common/fingerprint';
import { ChargeRequestDto, VerifyOtpDto } from './charge.dto';
import { PaymentsRepository } from '../payments/payments.repository';
import { SplitSettlementsService } from '../settlements/split-settlements.service';
import { collectingService } from '../payments/collecting-service';
import { PAYMENT_STATUS, paymentResult, PaymentRow } from '../payments/payment';
import { PaymentsService } from '../payments/payments.service';

const MAX_OTP_FAILURES = 4;

/** Direct mobile-money charges: acceptance, OTP verification and status (collection document §2–§4). */
@Injectable()
export class ChargesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(MOBILE_MONEY_RAIL) private readonly rail: MobileMoneyRail,
    private readonly services: ClientServicesService,
    private readonly splits: SplitSettlementsService,
    private readonly payments: PaymentsRepository,
    private readonly outcomes: PaymentsService,
    private readonly resolver: CallbackResolver,
  ) {}

  /**
   * Accepts a charge: checks it, records it with its settlement job in one transaction, and answers at once.
   * Idempotent on external_reference: a replay returns the original response, another body is a 409.
   */
  async accept(principal: GatewayPrincipal, dto: ChargeRequestDto) {
    if (dto.client_code !== principal.clientCode) throw new ForbiddenException('client_code does not belong to the authenticated client');
    const fingerprint = requestFingerprint('CHARGE', {
      ...dto,
      amount: new Money(dto.amount).toFixed(),
      transaction_charge: new Money(dto.transaction_charge).toFixed(),
    });
    const existing = await this.payments.byChargeReference(this.db.manager, principal.clientId, dto.external_reference);
    if (existing) return this.replay(existing, fingerprint);

    await this.assertCallbackUrl(dto.callback_url);
    const amount = new Money(dto.amount);
    const service = await collectingService(this.services, this.db.manager, {
      clientId: principal.clientId,
      serviceCode: dto.service_code,
      amount,
    });
    if (service.settlementCurrency !== dto.currency_code) {
      throw new GatewayError(
        400,
        GATEWAY_CODES.INVALID_CURRENCY,
        'Invalid currency code',
        `Service ${dto.service_code} collects in ${service.settlementCurrency}`,
      );
    }
    const transactionCharge = dto.add_transaction_charge ? new Money(dto.transaction_charge) : new Money(0);
    const merchantFee = dto.add_transaction_charge ? new Money(0) : feeFor(service.fees, amount);
    if (merchantFee.gte(amount))
      throw GatewayError.validation(`amount must be greater than the service fee of ${formatAmount(merchantFee)}`);
    const splits = await this.splits.validate(this.db.manager, {
      clientId: principal.clientId,
      clientServiceId: service.id,
      currency: dto.currency_code,
      amount,
      extraData: dto.extra_data,
    });
    const challenge = this.rail.challengeFor({
      paymentId: '',
      payerMsisdn: dto.payer_msisdn,
      amount: amount.plus(transactionCharge).toFixed(),
      currency: dto.currency_code,
    });

    const inserted = await this.db.transaction(async (manager) => {
      const id = await this.payments.insert(manager, {
        clientId: principal.clientId,
        clientServiceId: service.id,
        checkoutSessionId: null,
        externalReference: dto.external_reference,
        requestFingerprint: fingerprint,
        originChannelCode: dto.origin_channel_code,
        originatorMsisdn: dto.originator_msisdn,
        payerMsisdn: dto.payer_msisdn,
        payerName: dto.payer_name ?? null,
        payerEmail: dto.payer_email,
        accountNumber: dto.account_number,
        invoiceNumber: dto.invoice_number,
        currency: dto.currency_code,
        countryCode: dto.country_code,
        serviceAmount: amount,
        transactionCharge,
        merchantFee,
        addTransactionCharge: dto.add_transaction_charge,
        paymentMethodCode: dto.payment_method_code,
        extraData: dto.extra_data,
        description: dto.description,
        notifyClient: dto.notify_client,
        notifyOriginator: dto.notify_originator,
        callbackUrl: dto.callback_url,
        nextStep: challenge === 'NONE' ? null : challenge,
        splitSettlements: splits,
      });
      if (!id) return null; // a concurrent duplicate committed first
      if (challenge === 'AUTHORIZE_TRANSACTION') {
        await this.payments.setPaymentUrl(manager, id, `${this.config.publicBaseUrl}/checkout/authorize/${id}`);
      }
      // An OTP charge is submitted once the payer proves the OTP; the others settle after the operator's delay.
      if (challenge !== 'VERIFY_OTP') await this.outcomes.scheduleSettlement(manager, id, this.rail.settleDelayMs());
      return id;
    });
    const payment = inserted
      ? await this.payments.byId(this.db.manager, principal.clientId, inserted)
      : await this.payments.byChargeReference(this.db.manager, principal.clientId, dto.external_reference);
    return inserted ? chargeResponse(payment!) : this.replay(payment!, fingerprint);
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

  private replay(existing: PaymentRow, fingerprint: string) {
    if (existing.request_fingerprint !== fingerprint) throw GatewayError.duplicate('external_reference');
    return chargeResponse(existing);
  }

  private async assertCallbackUrl(url: string): Promise<void> {
    const problem = await this.resolver.entryProblem(url, this.config.isSandbox);
    if (problem) throw GatewayError.validation(`callback_url ${problem}`);
  }
}

function otpAnswer(reference: string, status: 'SUCCESSFUL' | 'OTP_INVALID' | 'FAILED', description: string) {
  return { reference, status, description };
}

/** The charge acceptance response (collection document §2). */
function chargeResponse(payment: PaymentRow) {
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
