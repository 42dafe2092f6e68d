import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CallbackSettingsService } from '../clients/callback-settings.service';
import { CallbacksService } from '../callbacks/delivery/callbacks.service';
import { FloatHoldsService } from '../float/float-holds.service';
import { PostingLane } from '../infra/database/posting-lane';
import { AIRTIME_RAIL, type AirtimeOutcome, type AirtimeRail, type AirtimeTopUp } from '../rails/airtime.rail';
import { AIRTIME_RESULT_EVENT, FINAL_STATUSES, RecipientRow, recipientResult, SERVICE_STATUS, STATUS_MESSAGES } from './airtime';
import { AirtimeRepository, type AirtimeSlice } from './airtime.repository';
import { RECIPIENTS_PER_JOB } from './airtime.service';
import { settleBounded } from '../common/settle-bounded';

/** Slices' worth of recipients asked at the provider at once (one call each, the provider's batches within it). */
const ASKS_IN_FLIGHT = 8;

/**
 * Tops up a slice of a request's recipients, re-asks about stuck ones (reconciliation) and books each result. Safe
 * to run any number of times, concurrently: only recipients not final yet move, under their row locks, each from an
 * unresolved status to one outcome: settled hold (602), released hold (603), or still held (601, 604).
 */
@Injectable()
export class AirtimeProcessingService {
  private readonly logger = new Logger(AirtimeProcessingService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(AIRTIME_RAIL) private readonly rail: AirtimeRail,
    private readonly airtime: AirtimeRepository,
    private readonly holds: FloatHoldsService,
    private readonly callbacks: CallbacksService,
    private readonly callbackSettings: CallbackSettingsService,
    private readonly lane: PostingLane,
  ) {}

  /**
   * The work queued at acceptance, a group of slices at once: their recipients still awaiting the provider are read in
   * one query, topped up a slice per provider call (ASKS_IN_FLIGHT calls at a time), and every answer booked in one
   * transaction. Answers, per slice, whether it is done; a slice whose provider call failed is to be tried
   * again (asking again is safe: a top-up is keyed by its recipient). The slices are one client's (a group's).
   */
  async process(clientId: string, slices: AirtimeSlice[]): Promise<boolean[]> {
    // The provider is asked a slice's worth at a time, as many at once as REQUESTS_IN_FLIGHT (its batches within each).
    const bySlice = new Map<string, RecipientRow[]>();
    for (const r of await this.airtime.awaitingProvider(this.db.manager, clientId, slices)) {
      const key = `${r.request_id}:${Math.floor((r.position - 1) / RECIPIENTS_PER_JOB)}`;
      const recipients = bySlice.get(key);
      if (recipients) recipients.push(r);
      else bySlice.set(key, [r]);
    }
    const asks = [...bySlice.values()];
    const asked = await settleBounded(asks, ASKS_IN_FLIGHT, (recipients) => this.ask(recipients, (t) => this.rail.topUp(t)));
    const failed = new Set<string>();
    const answered: Array<{ requestId: string; outcomes: Map<string, AirtimeOutcome> }> = [];
    asked.forEach((result, i) => {
      const requestId = asks[i][0].request_id;
      if (result.status === 'fulfilled') answered.push({ requestId, outcomes: result.value });
      else {
        failed.add(requestId);
        this.logger.warn(`airtime request ${requestId}: the provider could not be asked: ${(result.reason as Error).message}`);
      }
    });
    // One transaction for the group; when it fails, each slice's answers alone, so one holds back no other.
    await this.book(clientId, new Map(answered.flatMap((a) => [...a.outcomes]))).catch(async () => {
      for (const { requestId, outcomes } of answered) {
        await this.book(clientId, outcomes).catch((error: Error) => {
          this.logger.warn(`airtime request ${requestId}: answers could not be booked: ${error.message}`);
          failed.add(requestId);
        });
      }
    });
    return slices.map((slice) => !failed.has(String(slice.requestId)));
  }

  /**
   * Re-queries the provider about recipients not final yet (reconciliation of 601 and 604) and books what it says
   * now, request by request; answers how many reached a final status. A request whose provider call fails is left
   * for the next pass.
   */
  async recheck(ids: string[]): Promise<number> {
    const byRequest = new Map<string, RecipientRow[]>();
    for (const recipient of await this.airtime.unresolved(this.db.manager, ids)) {
      byRequest.set(recipient.request_id, [...(byRequest.get(recipient.request_id) ?? []), recipient]);
    }
    let finished = 0;
    for (const [requestId, recipients] of byRequest) {
      finished += await this.ask(recipients, (topUps) => this.rail.outcomeOf(topUps))
        .then((outcomes) => this.book(recipients[0].client_id, outcomes))
        .catch((error: Error) => {
          this.logger.warn(`airtime request ${requestId}: recipients could not be re-checked: ${error.message}`);
          return 0;
        });
    }
    return finished;
  }

  /** Asks the provider about recipients of one request; answers each one's outcome by recipient id. */
  private async ask(
    recipients: RecipientRow[],
    question: (topUps: AirtimeTopUp[]) => Promise<AirtimeOutcome[]>,
  ): Promise<Map<string, AirtimeOutcome>> {
    // Asked outside the transaction: provider calls must not hold row locks. Asking again is safe (per top-up).
    const answers = await question(
      recipients.map((r) => ({
        recipientId: r.id,
        clientId: r.client_id,
        correlationId: r.correlation_id,
        phoneNumber: r.phone_number,
        amount: r.amount,
        currency: r.currency,
      })),
    );
    return new Map(recipients.map((r, i) => [r.id, answers[i]]));
  }

  /**
   * An operator's answer for one recipient the provider leaves processing or jammed (`airtime:resolve`), booked as
   * the provider's would be: the hold settled, or amount and fee back to the float, and the merchant's airtime
   * callback. The recipient is the request's one not final yet with this number (digits compared).
   */
  async resolveByOperator(
    clientId: string,
    reference: string,
    phoneNumber: string,
    resolution: 'SUCCESSFUL' | 'FAILED',
  ): Promise<RecipientRow> {
    const recipients = await this.airtime.results(this.db.manager, clientId, reference);
    if (!recipients) throw new AirtimeResolutionError(`airtime request ${reference} not found for this client`);
    const digits = (phone: string) => phone.replace(/\D/g, '');
    const withNumber = recipients.filter((r) => digits(r.phone_number) === digits(phoneNumber));
    const atProvider = withNumber.filter((r) => AT_PROVIDER.includes(r.service_status));
    if (withNumber.length === 0) throw new AirtimeResolutionError(`airtime request ${reference} has no recipient ${phoneNumber}`);
    if (atProvider.length !== 1) {
      const statuses = withNumber.map((r) => r.service_status).join(', ');
      throw new AirtimeResolutionError(
        atProvider.length === 0
          ? `airtime recipient ${phoneNumber} of ${reference} is not processing or jammed (service_status ${statuses}): only one at the provider (601, 604) can be resolved`
          : `airtime request ${reference} has ${atProvider.length} recipients ${phoneNumber} processing or jammed: which one is ambiguous`,
      );
    }
    const [recipient] = atProvider;
    const outcome: AirtimeOutcome =
      resolution === 'SUCCESSFUL'
        ? { status: 'SUCCESSFUL', providerReference: recipient.provider_reference ?? `MANUAL-${recipient.correlation_id}` }
        : { status: 'FAILED', reason: 'resolved by operator' };
    if ((await this.book(clientId, new Map([[recipient.id, outcome]]))) === 0) {
      throw new AirtimeResolutionError(`airtime recipient ${phoneNumber} of ${reference} became final meanwhile`);
    }
    const rows = await this.airtime.results(this.db.manager, clientId, reference);
    return rows!.find((r) => r.id === recipient.id)!;
  }

  /**
   * Books outcomes of the client's recipients (of any of its requests) under the row locks, in one transaction;
   * answers how many reached a final status. Only recipients still not final move.
   */
  private async book(clientId: string, outcomes: Map<string, AirtimeOutcome>): Promise<number> {
    if (outcomes.size === 0) return 0;
    return this.lane.run(() => this.bookNow(clientId, outcomes));
  }

  private bookNow(clientId: string, outcomes: Map<string, AirtimeOutcome>): Promise<number> {
    return this.db.transaction(async (manager) => {
      const locked = await this.airtime.lockUnresolved(manager, clientId, [...outcomes.keys()]);
      if (locked.length === 0) return 0;
      const changed = locked.map((r) => nextState(r, outcomes.get(r.id)!)).filter((r): r is RecipientRow => r !== null);
      const finals = changed.filter((r) => FINAL_STATUSES.includes(r.service_status));
      await this.airtime.setStatuses(manager, clientId, changed);
      await this.announce(manager, clientId, finals);
      // Every final status resolves its hold, all in one call: settled on success, amount and fee back to the float on
      // failure. Last, so that the merchant's float, in-flight and fee accounts (which every payout, airtime and
      // collection of the merchant also locks) are held only for the commit; a stale hold undoes the whole booking.
      const holds = await this.holds.resolve(
        manager,
        finals.map((r) => ({
          clientId: r.client_id,
          holdId: r.hold_id,
          outcome: r.service_status === SERVICE_STATUS.SUCCESSFUL ? 'SETTLE' : 'RELEASE',
        })),
      );
      const stale = finals.find((_, i) => !holds[i].resolved);
      if (stale) throw new HoldAlreadyResolvedError(stale);
      return finals.length;
    });
  }

  /**
   * One callback per recipient that reached a final status, to the client's airtime callback URL (set in the
   * portal or with `callback:set --kind airtime`); without one, the status query is the only source.
   */
  private async announce(manager: EntityManager, clientId: string, results: RecipientRow[]): Promise<void> {
    if (results.length === 0) return;
    const endpoint = await this.callbackSettings.endpointFor(manager, clientId, 'airtime');
    if (!endpoint) return;
    await this.callbacks.schedule(
      manager,
      ...results.map((result) => ({
        clientId,
        kind: 'airtime' as const,
        event: AIRTIME_RESULT_EVENT,
        reference: result.reference,
        urls: [endpoint.url],
        payload: recipientResult(result),
      })),
    );
  }
}

/** Where the provider's answer takes a recipient not final yet; null when nothing changes (still processing or jammed). */
function nextState(recipient: RecipientRow, outcome: AirtimeOutcome): RecipientRow | null {
  switch (outcome.status) {
    case 'SUCCESSFUL':
      return {
        ...recipient,
        service_status: SERVICE_STATUS.SUCCESSFUL,
        message: STATUS_MESSAGES[602],
        provider_reference: outcome.providerReference,
      };
    case 'FAILED':
      return { ...recipient, service_status: SERVICE_STATUS.FAILED, message: `${STATUS_MESSAGES[603]}: ${outcome.reason}` };
    case 'PROCESSING':
      return recipient.service_status === SERVICE_STATUS.PROCESSING
        ? null
        : { ...recipient, service_status: SERVICE_STATUS.PROCESSING, message: STATUS_MESSAGES[601] };
    case 'JAMMED':
      return recipient.service_status === SERVICE_STATUS.JAMMED
        ? null
        : { ...recipient, service_status: SERVICE_STATUS.JAMMED, message: STATUS_MESSAGES[604] };
  }
}

/** Statuses in which a recipient is at the provider without an outcome: the ones an operator may resolve. */
const AT_PROVIDER: readonly number[] = [SERVICE_STATUS.PROCESSING, SERVICE_STATUS.JAMMED];

/** An `airtime:resolve` the records do not allow: printed to the operator as it is. */
export class AirtimeResolutionError extends Error {}

/** A recipient awaiting the provider whose hold already has an outcome: the records disagree; nothing is booked. */
class HoldAlreadyResolvedError extends Error {
  constructor(recipient: RecipientRow) {
    super(`airtime recipient ${recipient.id}: hold ${recipient.hold_id} is already resolved`);
  }
}
