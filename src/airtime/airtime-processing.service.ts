import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CallbackSettingsService } from '../callbacks/callback-settings.service';
import { CallbacksService } from '../callbacks/callbacks.service';
import { FloatHoldsService } from '../float/float-holds.service';
import { LedgerService } from '../ledger/ledger.service';
import { AIRTIME_RAIL, type AirtimeOutcome, type AirtimeRail } from '../rails/airtime.rail';
import { AIRTIME_RESULT_EVENT, RecipientRow, recipientResult, SERVICE_STATUS, STATUS_MESSAGES } from './airtime';
import { AirtimeRepository } from './airtime.repository';

/**
 * Tops up a slice of a request's recipients and books each result. Safe to run any number of times: the provider
 * is asked only about recipients still awaiting it, and only those move, under their row locks, each from an
 * unresolved status to one outcome: settled hold (602), released hold (603), or still held (601, 604).
 */
@Injectable()
export class AirtimeProcessingService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(AIRTIME_RAIL) private readonly rail: AirtimeRail,
    private readonly airtime: AirtimeRepository,
    private readonly holds: FloatHoldsService,
    private readonly ledger: LedgerService,
    private readonly callbacks: CallbacksService,
    private readonly callbackSettings: CallbackSettingsService,
  ) {}

  async process(requestId: string, first: number, last: number): Promise<void> {
    const awaiting = await this.airtime.awaitingProvider(this.db.manager, requestId, first, last);
    if (awaiting.length === 0) return;
    // Asked outside the transaction: provider calls must not hold row locks. Asking again is safe (correlation id).
    const outcomes = new Map<string, AirtimeOutcome>();
    await Promise.all(
      awaiting.map(async (r) => {
        outcomes.set(r.id, await this.rail.topUp({ correlationId: r.correlation_id, phoneNumber: r.phone_number, amount: r.amount, currency: r.currency }));
      }),
    );
    if (awaiting.every((r) => outcomes.get(r.id)!.status === 'PROCESSING' && r.service_status === SERVICE_STATUS.PROCESSING)) return;

    await this.db.transaction(async (manager) => {
      const recipients = await this.airtime.lockAwaitingProvider(manager, [...outcomes.keys()]);
      if (recipients.length === 0) return;
      await this.lockAccountsOf(manager, recipients[0]);
      const results: RecipientRow[] = [];
      for (const recipient of recipients) {
        const result = await this.book(manager, recipient, outcomes.get(recipient.id)!);
        if (result) results.push(result);
      }
      await this.announce(manager, recipients[0].client_id, results);
    });
  }

  /** Books one outcome; returns the recipient as it now stands when it reached a final status. */
  private async book(manager: EntityManager, recipient: RecipientRow, outcome: AirtimeOutcome): Promise<RecipientRow | null> {
    switch (outcome.status) {
      case 'SUCCESSFUL': {
        if (!(await this.holds.settle(manager, recipient.hold_id))) throw new HoldAlreadyResolvedError(recipient);
        return this.resolve(manager, recipient, SERVICE_STATUS.SUCCESSFUL, STATUS_MESSAGES[SERVICE_STATUS.SUCCESSFUL], outcome.providerReference);
      }
      case 'FAILED': {
        if (!(await this.holds.release(manager, recipient.hold_id))) throw new HoldAlreadyResolvedError(recipient);
        return this.resolve(manager, recipient, SERVICE_STATUS.FAILED, `${STATUS_MESSAGES[SERVICE_STATUS.FAILED]}: ${outcome.reason}`, null);
      }
      case 'PROCESSING':
        if (recipient.service_status !== SERVICE_STATUS.PROCESSING) {
          await this.airtime.setStatus(manager, recipient.id, {
            status: SERVICE_STATUS.PROCESSING,
            message: STATUS_MESSAGES[SERVICE_STATUS.PROCESSING],
            providerReference: null,
            final: false,
          });
        }
        return null;
      case 'JAMMED':
        await this.airtime.setStatus(manager, recipient.id, {
          status: SERVICE_STATUS.JAMMED,
          message: STATUS_MESSAGES[SERVICE_STATUS.JAMMED],
          providerReference: null,
          final: false,
        });
        return null;
    }
  }

  private async resolve(
    manager: EntityManager,
    recipient: RecipientRow,
    status: typeof SERVICE_STATUS.SUCCESSFUL | typeof SERVICE_STATUS.FAILED,
    message: string,
    providerReference: string | null,
  ): Promise<RecipientRow> {
    await this.airtime.setStatus(manager, recipient.id, { status, message, providerReference, final: true });
    return { ...recipient, service_status: status, message, provider_reference: providerReference };
  }

  /**
   * One callback per recipient that reached a final status, to the client's airtime callback URL (set in the
   * portal or with `callback:set --kind airtime`); without one, the status query is the only source.
   */
  private async announce(manager: EntityManager, clientId: string, results: RecipientRow[]): Promise<void> {
    if (results.length === 0) return;
    const endpoint = await this.callbackSettings.endpointFor(manager, clientId, 'airtime');
    if (!endpoint) return;
    for (const result of results) {
      await this.callbacks.schedule(manager, {
        clientId,
        kind: 'airtime',
        event: AIRTIME_RESULT_EVENT,
        reference: result.reference,
        urls: [endpoint.url],
        payload: recipientResult(result),
      });
    }
  }

  /** Every recipient of a request is paid from the same float through the same accounts. */
  private async lockAccountsOf(manager: EntityManager, recipient: RecipientRow): Promise<void> {
    const accountIds = [recipient.float_account_id];
    for (const kind of ['IN_FLIGHT_AIRTIME', 'SETTLEMENT', 'FEE_INCOME'] as const) {
      accountIds.push((await this.ledger.systemAccount(manager, recipient.client_id, kind, recipient.currency)).id);
    }
    await this.airtime.lockLedgerAccounts(manager, accountIds);
  }
}

/** A recipient awaiting the provider whose hold already has an outcome: the records disagree; nothing is booked. */
class HoldAlreadyResolvedError extends Error {
  constructor(recipient: RecipientRow) {
    super(`airtime recipient ${recipient.id}: hold ${recipient.hold_id} is already resolved`);
  }
}
