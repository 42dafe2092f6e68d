import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { CallbackResolver } from '../callbacks/pinned-post';
import { ClientServicesService } from '../client-services/client-services.service';
import { feeFor } from '../client-services/fees';
import { formatAmount, Money } from '../common/money';
import { FloatHoldsService, InFlightRail, InsufficientFloatError } from '../float/float-holds.service';
import { isRefusal, PayingService, payingService } from '../float/paying-service';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { OutboxService } from '../infra/queue/outbox.service';
import { TOPICS } from '../infra/queue/queues';
import { b2bResult, payoutResult } from '../payouts/payout';
import { NewPayout, PayoutsRepository } from '../payouts/payouts.repository';
import { PAYOUT_RAIL, type PayoutDestination, type PayoutRail } from '../rails/payout.rail';
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
type PayoutRequest = Omit<NewPayout, 'clientId' | 'clientServiceId' | 'floatAccountId' | 'fee'> & { serviceCode: string };

/**
 * The request side of payouts, IMT and B2B: checks a request, then in one transaction claims its reference,
 * reserves amount + fee from the float and queues its processing, and answers 720 at once (document §3).
 */
@Injectable()
export class PayoutRequestsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PAYOUT_RAIL) private readonly rail: PayoutRail,
    private readonly services: ClientServicesService,
    private readonly holds: FloatHoldsService,
    private readonly payouts: PayoutsRepository,
    private readonly outbox: OutboxService,
    private readonly resolver: CallbackResolver,
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
    const service = await this.payingService(principal.clientId, request);
    const fee = feeFor(service.fees, request.amount);

    const accepted = await this.db
      .transaction(async (manager) => {
        // The reference first: a concurrent duplicate waits here and then finds it taken, before touching the float.
        const payoutId = await this.payouts.claim(manager, {
          ...request,
          clientId: principal.clientId,
          clientServiceId: service.id,
          floatAccountId: service.settlementAccountId,
          fee,
        });
        if (!payoutId) return false;
        const reservation = await this.holds.reserve(manager, {
          clientId: principal.clientId,
          floatAccountId: service.settlementAccountId,
          currency: request.currency,
          rail: inFlightRail(request.destinationType),
          lines: [{ amount: request.amount, fee }],
        });
        await this.payouts.attachHold(manager, payoutId, reservation.holdIds[0], reservation.floatBalanceAfter);
        await this.outbox.enqueue(manager, TOPICS.processPayout, { payoutId }, new Date(Date.now() + this.rail.settleDelayMs()));
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof InsufficientFloatError) {
          throw PayoutError.rejected(
            'INSUFFICIENT_BALANCE',
            `Insufficient float balance for ${request.currency} ${formatAmount(request.amount)} plus the fee of ${formatAmount(fee)}`,
            request.payoutReference,
          );
        }
        throw error;
      });
    if (!accepted) throw PayoutError.duplicate(request.payoutReference);
    return {
      payout_reference: request.payoutReference,
      response_code: PAYOUT_CODES.ACCEPTED,
      response_description: 'Accepted for processing',
    };
  }

  /**
   * The service the payout is paid from: the caller's, active, with an active float (its settlement wallet) in the
   * request's currency, and the amount within its bounds.
   */
  private async payingService(clientId: string, request: PayoutRequest): Promise<PayingService> {
    const terms = await payingService(this.services, this.db.manager, clientId, request.serviceCode);
    if (isRefusal(terms)) {
      const description = terms.refusal === 'SERVICE_NOT_ALLOWED' ? 'Invalid Service' : terms.detail;
      throw PayoutError.rejected(terms.refusal, description, request.payoutReference);
    }
    if (terms.settlementCurrency !== request.currency) {
      throw PayoutError.rejected(
        'SERVICE_NOT_ALLOWED',
        `Service ${request.serviceCode} pays out of a ${terms.settlementCurrency} float; the request is in ${request.currency}`,
        request.payoutReference,
      );
    }
    if (request.amount.lt(terms.minimumAmount) || request.amount.gt(terms.maximumAmount)) {
      throw PayoutError.rejected(
        'VALIDATION_FAILED',
        `Validation Failed: the amount must be between ${formatAmount(terms.minimumAmount)} and ${formatAmount(terms.maximumAmount)}`,
        request.payoutReference,
      );
    }
    return terms;
  }
}

/** A local payout or IMT: paid from the float in source_currency, sender_amount to the recipient's wallet or bank account. */
function localRequest(kind: 'LOCAL' | 'IMT', dto: LocalPayoutDto): PayoutRequest {
  return {
    kind,
    payoutReference: dto.payout_reference,
    serviceCode: dto.service_code,
    amount: new Money(dto.sender_amount),
    currency: dto.source_currency,
    destinationType: dto.destination_type,
    destinationName: dto.destination_name,
    recipientAccountNumber: dto.recipient_account_number,
    recipientPhoneNumber: dto.recipient_phone_number,
    recipientBankCode: dto.recipient_bank_code || null,
    callbackUrl: dto.callback_url,
    request: dto,
  };
}

function inFlightRail(destination: PayoutDestination): InFlightRail {
  return destination === 'BANK' || destination === 'BANK_ACCOUNT_NUMBER' ? 'IN_FLIGHT_BANK' : 'IN_FLIGHT_MOBILE_MONEY';
}
