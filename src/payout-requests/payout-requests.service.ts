import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { CallbackResolver } from '../common/url-safety/pinned-post';
import { formatAmount, Money } from '../common/money';
import type { InFlightRail } from '../float/float-holds.service';
import { payingServiceRefusal, refusedByPayingService } from '../float/paying-service';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { b2bResult, payoutResult } from '../payouts/payout';
import { PayoutAcceptance, PayoutsRepository, PayoutToAccept } from '../payouts/payouts.repository';
import { RailHealth } from '../rails/rail-health';
import { PAYOUT_RAIL, type PayoutDestination, type PayoutForAcceptance, type PayoutRail } from '../rails/payout.rail';
import { PAYOUT_CODES, PayoutError } from './payout-error';
import { B2bPayoutDto, ImtPayoutDto, LocalPayoutDto, PayoutAcknowledgement } from './payout.dto';

/** IMT: recipient_amount must equal sender_amount × exchange_rate within this much (provider contract §5). */
const IMT_TOLERANCE = new Money('0.01');

/** recipient_type ↔ payment_method of a B2B payout (document §2). */
const B2B_PAYMENT_METHOD = {
  PAYBILL: 'MMONEY_B2B',
  TILL: 'MMONEY_B2B',
  BANK_ACCOUNT_NUMBER: 'BANK',
} as const;

/** What every kind of payout request comes down to once its own fields are checked. */
type PayoutRequest = Omit<PayoutToAccept, 'clientId' | 'rail' | 'processAt'>;

/**
 * The request side of payouts, IMT and B2B: checks a request's fields, then in one database call checks the paying
 * service, claims the reference, reserves amount + fee from the float and queues its processing, and answers 720 at
 * once (document §3).
 */
@Injectable()
export class PayoutRequestsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PAYOUT_RAIL) private readonly rail: PayoutRail,
    private readonly payouts: PayoutsRepository,
    private readonly resolver: CallbackResolver,
    private readonly health: RailHealth,
  ) {}

  acceptLocal(principal: GatewayPrincipal, dto: LocalPayoutDto): Promise<PayoutAcknowledgement> {
    return this.accept(principal, localRequest('LOCAL', dto));
  }

  acceptImt(principal: GatewayPrincipal, dto: ImtPayoutDto): Promise<PayoutAcknowledgement> {
    const expected = new Money(dto.sender_amount).times(new Money(dto.exchange_rate));
    if (expected.minus(new Money(dto.recipient_amount)).abs().gt(IMT_TOLERANCE)) {
      throw PayoutError.rejected(
        'VALIDATION_FAILED',
        `Validation Failed: recipient_amount must equal sender_amount × exchange_rate (${expected.toDecimalPlaces(4).toFixed()}) within 0.01`,
        dto.payout_reference,
      );
    }
    return this.accept(principal, localRequest('IMT', dto));
  }

  acceptB2b(principal: GatewayPrincipal, dto: B2bPayoutDto): Promise<PayoutAcknowledgement> {
    if (B2B_PAYMENT_METHOD[dto.recipient_type] !== dto.payment_method) {
      throw PayoutError.rejected(
        'INVALID_PAYMENT_METHOD',
        `payment_method for recipient_type ${dto.recipient_type} must be ${B2B_PAYMENT_METHOD[dto.recipient_type]}`,
        dto.payout_reference,
      );
    }
    return this.accept(principal, {
      kind: 'B2B',
      payoutReference: dto.payout_reference,
      serviceCode: dto.service_code,
      amount: new Money(dto.amount),
      currency: dto.currency_code,
      recipientMoney: null,
      destinationType: dto.recipient_type,
      destinationName: dto.payment_method,
      recipientAccountNumber: dto.recipient_account_number,
      recipientPhoneNumber: null,
      recipientBankCode: null,
      callbackUrl: dto.callback_url,
      request: dto,
    });
  }

  /** A local payout's or IMT's result (723 for unknown, foreign or B2B references). */
  async status(principal: GatewayPrincipal, reference: string) {
    const payout = await this.payouts.byReference(this.db.manager, principal.clientId, reference, ['LOCAL', 'IMT']);
    if (!payout) throw PayoutError.notFound(reference);
    return payoutResult(payout);
  }

  async b2bStatus(principal: GatewayPrincipal, reference: string) {
    const payout = await this.payouts.byReference(this.db.manager, principal.clientId, reference, ['B2B']);
    if (!payout) throw PayoutError.notFound(reference);
    return b2bResult(payout);
  }

  private async accept(principal: GatewayPrincipal, request: PayoutRequest): Promise<PayoutAcknowledgement> {
    const refusal = await this.resolver.entryProblem(request.callbackUrl, this.config.isSandbox);
    if (refusal) throw PayoutError.rejected('VALIDATION_FAILED', `Validation Failed: callback_url ${refusal}`, request.payoutReference);
    const railProblem = this.rail.acceptanceProblem({
      destination: request.destinationType,
      bankCode: request.recipientBankCode,
      ...paidAtRail(request),
    });
    if (railProblem) throw PayoutError.rejected('VALIDATION_FAILED', `Validation Failed: ${railProblem}`, request.payoutReference);
    const down = await this.health.refusal(this.rail.operatorFor(request.destinationType));
    if (down) throw PayoutError.unavailable(down, request.payoutReference);
    const accepted = await this.payouts.accept({
      ...request,
      clientId: principal.clientId,
      rail: inFlightRail(request.destinationType),
      processAt: new Date(Date.now() + this.rail.settleDelayMs()),
    });
    if (accepted.outcome !== 'ACCEPTED') throw refusalOf(request, accepted);
    return {
      payout_reference: request.payoutReference,
      response_code: PAYOUT_CODES.ACCEPTED,
      response_description: 'Accepted for processing',
    };
  }
}

/**
 * The answer to a payout that was not accepted. The paying service is checked first (the caller's, active, with an
 * active float in the request's currency, the amount within its bounds), then the reference, then the float.
 */
function refusalOf(request: PayoutRequest, refused: Exclude<PayoutAcceptance, { outcome: 'ACCEPTED' }>): PayoutError {
  const reference = request.payoutReference;
  if (refusedByPayingService(refused)) {
    const { refusal, detail } = payingServiceRefusal(refused.outcome, request.serviceCode);
    return PayoutError.rejected(refusal, refusal === 'SERVICE_NOT_ALLOWED' ? 'Invalid Service' : detail, reference);
  }
  switch (refused.outcome) {
    case 'CURRENCY':
      return PayoutError.rejected(
        'SERVICE_NOT_ALLOWED',
        `Service ${request.serviceCode} pays out of a ${refused.detail.float_currency} float; the request is in ${request.currency}`,
        reference,
      );
    case 'AMOUNT_BOUNDS':
      return PayoutError.rejected(
        'VALIDATION_FAILED',
        `Validation Failed: the amount must be between ${formatAmount(refused.detail.minimum)} and ${formatAmount(refused.detail.maximum)}`,
        reference,
      );
    case 'DUPLICATE':
      return PayoutError.duplicate(reference);
    case 'INSUFFICIENT_FLOAT':
      return PayoutError.rejected(
        'INSUFFICIENT_BALANCE',
        `Insufficient float balance for ${request.currency} ${formatAmount(request.amount)} plus the fee of ${formatAmount(refused.detail.fee)}`,
        reference,
      );
  }
}

/**
 * A local payout or IMT: sender_amount paid from the float in source_currency to the recipient's wallet or bank
 * account. An IMT's recipient receives recipient_amount in destination_currency: that is what its rail sends.
 */
function localRequest(kind: 'LOCAL' | 'IMT', dto: LocalPayoutDto): PayoutRequest {
  return {
    kind,
    payoutReference: dto.payout_reference,
    serviceCode: dto.service_code,
    amount: new Money(dto.sender_amount),
    currency: dto.source_currency,
    recipientMoney: kind === 'IMT' ? { amount: new Money(dto.recipient_amount), currency: dto.destination_currency } : null,
    destinationType: dto.destination_type,
    destinationName: dto.destination_name,
    recipientAccountNumber: dto.recipient_account_number,
    recipientPhoneNumber: dto.recipient_phone_number,
    recipientBankCode: dto.recipient_bank_code || null,
    callbackUrl: dto.callback_url,
    request: dto,
  };
}

/** What the rail pays and how a refusal names it: an IMT's recipient_amount, else the payout's own amount. */
function paidAtRail(request: PayoutRequest): Pick<PayoutForAcceptance, 'amount' | 'currency' | 'what'> {
  const money = request.recipientMoney;
  return money
    ? { amount: money.amount.toFixed(), currency: money.currency, what: 'recipient_amount' }
    : { amount: request.amount.toFixed(), currency: request.currency, what: 'the payout amount' };
}

function inFlightRail(destination: PayoutDestination): InFlightRail {
  return destination === 'BANK' || destination === 'BANK_ACCOUNT_NUMBER' ? 'IN_FLIGHT_BANK' : 'IN_FLIGHT_MOBILE_MONEY';
}
