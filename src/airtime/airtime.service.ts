import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { ClientServicesService } from '../client-services/client-services.service';
import { feeFor } from '../client-services/fees';
import { formatAmount, Money } from '../common/money';
import { PAYOUT_CODES } from '../disbursements/payout-error';
import { FloatHoldsService, InsufficientFloatError } from '../float/float-holds.service';
import { isRefusal, PayingService, payingService } from '../float/paying-service';
import { OutboxService } from '../infra/queue/outbox.service';
import { TOPICS } from '../infra/queue/queues';
import { AIRTIME_RAIL, type AirtimeRail } from '../rails/airtime.rail';
import { airtimeDuplicate, airtimeNotFound, airtimeRejection, recipientResult, STATUS_MESSAGES, SERVICE_STATUS } from './airtime';
import { AirtimeRequestDto } from './airtime.dto';
import { AirtimeRepository, NewRecipient } from './airtime.repository';

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
    private readonly services: ClientServicesService,
    private readonly holds: FloatHoldsService,
    private readonly outbox: OutboxService,
    private readonly airtime: AirtimeRepository,
  ) {}

  /**
   * Accepts a request: every recipient is checked first; then the request, its recipients, one reservation of the
   * total (one ledger entry, one hold per recipient) and the processing jobs commit together, or nothing does.
   */
  async send(principal: GatewayPrincipal, dto: AirtimeRequestDto) {
    const { reference } = dto;
    assertDistinctNumbers(dto);
    if (await this.airtime.exists(this.db.manager, principal.clientId, reference)) throw airtimeDuplicate(reference);
    const service = await this.payingService(principal.clientId, dto);
    const recipients = dto.recipients.map((r, i) => {
      const amount = new Money(r.amount);
      if (amount.lt(service.minimumAmount) || amount.gt(service.maximumAmount)) {
        throw airtimeRejection(
          reference,
          'VALIDATION_FAILED',
          `recipients.${i}.amount must be between ${formatAmount(service.minimumAmount)} and ${formatAmount(service.maximumAmount)}`,
        );
      }
      return { phoneNumber: r.phone_number, amount, fee: feeFor(service.fees, amount) };
    });

    const accepted = await this.db
      .transaction(async (manager) => {
        const requestId = await this.airtime.claim(manager, {
          clientId: principal.clientId,
          reference,
          clientServiceId: service.id,
          currency: service.settlementCurrency,
          recipientCount: recipients.length,
        });
        if (!requestId) return false; // a concurrent duplicate committed first
        const reservation = await this.holds.reserve(manager, {
          clientId: principal.clientId,
          floatAccountId: service.settlementAccountId,
          currency: service.settlementCurrency,
          rail: 'IN_FLIGHT_AIRTIME',
          lines: recipients,
        });
        const rows: NewRecipient[] = recipients.map((r, i) => ({
          ...r,
          holdId: reservation.holdIds[i],
          message: STATUS_MESSAGES[SERVICE_STATUS.UNPROCESSED],
        }));
        await this.airtime.addRecipients(manager, requestId, reservation.reservationId, rows);
        await this.scheduleProcessing(manager, requestId, rows.length);
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof InsufficientFloatError) {
          throw airtimeRejection(reference, 'INSUFFICIENT_BALANCE', 'The float does not cover the amounts and fees of all recipients');
        }
        throw error;
      });
    if (!accepted) throw airtimeDuplicate(reference);
    return { reference, response_code: PAYOUT_CODES.ACCEPTED, response_description: 'Accepted for processing' };
  }

  /** The per-recipient results of the caller's request, in request order. */
  async status(principal: GatewayPrincipal, reference: string) {
    const rows = await this.airtime.results(this.db.manager, principal.clientId, reference);
    if (!rows) throw airtimeNotFound(reference);
    return rows.map(recipientResult);
  }

  /** The service named by service_code, else the client's default airtime service: the caller's, active, with a float. */
  private async payingService(clientId: string, dto: AirtimeRequestDto): Promise<PayingService> {
    const code = dto.service_code ?? (await this.airtime.defaultServiceCode(this.db.manager, clientId));
    if (!code)
      throw airtimeRejection(dto.reference, 'SERVICE_NOT_ALLOWED', 'No service_code given and no default airtime service configured');
    const service = await payingService(this.services, this.db.manager, clientId, code);
    if (isRefusal(service)) throw airtimeRejection(dto.reference, service.refusal, service.detail);
    return service;
  }

  /** One job per slice of RECIPIENTS_PER_JOB positions, due when the provider has had time to answer. */
  private async scheduleProcessing(manager: EntityManager, requestId: string, count: number): Promise<void> {
    const jobs: Array<Record<string, string>> = [];
    for (let first = 1; first <= count; first += RECIPIENTS_PER_JOB) {
      jobs.push({ requestId, first: String(first), last: String(Math.min(count, first + RECIPIENTS_PER_JOB - 1)) });
    }
    await this.outbox.enqueueMany(manager, TOPICS.processAirtime, jobs, new Date(Date.now() + this.rail.settleDelayMs()));
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
