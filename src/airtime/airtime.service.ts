import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { formatAmount, Money } from '../common/money';
import { PAYOUT_CODES, PayoutError } from '../payout-requests/payout-error';
import { payingServiceRefusal, refusedByPayingService } from '../float/paying-service';
import { AIRTIME_RAIL, type AirtimeRail } from '../rails/airtime.rail';
import { RailHealth } from '../rails/rail-health';
import {
  airtimeDuplicate,
  airtimeNotFound,
  airtimeUnavailable,
  airtimeRejection,
  recipientResult,
  STATUS_MESSAGES,
  SERVICE_STATUS,
} from './airtime';
import { AirtimeRequestDto } from './airtime.dto';
import { AirtimeAcceptance, AirtimeRepository } from './airtime.repository';

/**
 * Recipients per processing job. The jobs of a request run in parallel (provider calls overlap); each books its
 * slice in one transaction. Measured with 1,000 recipients (docs/decisions.md "Airtime").
 */
export const RECIPIENTS_PER_JOB = 50;

/** Bulk airtime: acceptance (validated whole, reserved in one entry) and the per-recipient status (document §2–§4). */
@Injectable()
export class AirtimeService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(AIRTIME_RAIL) private readonly rail: AirtimeRail,
    private readonly airtime: AirtimeRepository,
    private readonly health: RailHealth,
  ) {}

  /**
   * Accepts a request: the recipients' numbers are checked here, everything else in one database call (the paying
   * service, each amount against its bounds, the reference, one reservation of the total with a hold per recipient,
   * the recipients and the processing jobs), which commits all of it or nothing. While the provider's circuit is
   * open nothing is stored: the request is refused (503) and may be sent again.
   */
  async send(principal: GatewayPrincipal, dto: AirtimeRequestDto) {
    const { reference } = dto;
    assertDistinctNumbers(dto);
    const down = await this.health.refusal(this.rail.operator);
    if (down) throw airtimeUnavailable(reference, down);
    const accepted = await this.airtime.accept({
      clientId: principal.clientId,
      reference,
      serviceCode: dto.service_code ?? null,
      recipients: dto.recipients.map((r) => ({ phoneNumber: r.phone_number, amount: new Money(r.amount) })),
      message: STATUS_MESSAGES[SERVICE_STATUS.UNPROCESSED],
      recipientsPerJob: RECIPIENTS_PER_JOB,
      processAt: new Date(Date.now() + this.rail.settleDelayMs()),
    });
    if (accepted.outcome !== 'ACCEPTED') throw refusalOf(reference, accepted);
    return { reference, response_code: PAYOUT_CODES.ACCEPTED, response_description: 'Accepted for processing' };
  }

  /** The per-recipient results of the caller's request, in request order. */
  async status(principal: GatewayPrincipal, reference: string) {
    const rows = await this.airtime.results(this.db.manager, principal.clientId, reference);
    if (!rows) throw airtimeNotFound(reference);
    return rows.map(recipientResult);
  }
}

/** The answer to a request that was not accepted, in the order acceptance checks: reference, service, amounts, float. */
function refusalOf(reference: string, refused: Exclude<AirtimeAcceptance, { outcome: 'ACCEPTED' }>): PayoutError {
  if (refusedByPayingService(refused)) {
    const { refusal, detail } = payingServiceRefusal(refused.outcome, refused.detail.service_code);
    return airtimeRejection(reference, refusal, detail);
  }
  switch (refused.outcome) {
    case 'DUPLICATE':
      return airtimeDuplicate(reference);
    case 'NO_DEFAULT_SERVICE':
      return airtimeRejection(reference, 'SERVICE_NOT_ALLOWED', 'No service_code given and no default airtime service configured');
    case 'AMOUNT_BOUNDS': {
      const { recipient_index, minimum, maximum } = refused.detail;
      return airtimeRejection(
        reference,
        'VALIDATION_FAILED',
        `recipients.${recipient_index}.amount must be between ${formatAmount(minimum)} and ${formatAmount(maximum)}`,
      );
    }
    case 'INSUFFICIENT_FLOAT':
      return airtimeRejection(reference, 'INSUFFICIENT_BALANCE', 'The float does not cover the amounts and fees of all recipients');
  }
}

/**
 * The document's idempotency key of a callback is external_reference plus phone_number, so a number may appear
 * once per request (compared without the optional +).
 */
function assertDistinctNumbers(dto: AirtimeRequestDto): void {
  const seen = new Map<string, number>();
  dto.recipients.forEach((r, i) => {
    const digits = r.phone_number.replace(/^\+/, '');
    const earlier = seen.get(digits);
    if (earlier !== undefined) {
      throw airtimeRejection(
        dto.reference,
        'INVALID_PHONE_NUMBER',
        `recipients.${i}.phone_number repeats recipients.${earlier}.phone_number`,
      );
    }
    seen.set(digits, i);
  });
}
