import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { CallbacksService } from '../callbacks/delivery/callbacks.service';
import { GatewayError } from '../common/errors/gateway-error';
import { formatAmount } from '../common/money';
import { isUniqueViolation } from '../common/errors/pg-errors';
import { OutboxService } from '../infra/queue/outbox.service';
import { TOPICS } from '../infra/queue/queues';
import { JOURNAL_ENTRY_KIND } from '../ledger/journal-entry-kind';
import { FloorBreachError, UnknownLedgerEntryError } from '../ledger/ledger.errors';
import { LedgerService } from '../ledger/ledger.service';
import { MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../rails/mobile-money.rail';
import { PAYMENT_STATUS, PaymentRow } from '../collections/payment';
import { CollectionReversalDto } from './collection-reversal.dto';
import { PaymentsRepository } from '../collections/payments.repository';
import { PaymentsService } from '../collections/payments.service';

/** The four validation messages of the collection document §7, used as written. */
export const REVERSAL_REJECTIONS = {
  alreadyReversed: 'Transaction Already Reversed',
  invalidPayment: 'Invalid Payment Reference',
  duplicateReference: 'Duplicate Reversal Reference',
  notEligible: 'Transaction Not Eligible for Reversal',
} as const;

interface ReversalRow {
  id: string;
  client_id: string;
  reversal_reference: string;
  payment_id: string;
  status: 'pending' | 'processing' | 'successful' | 'failed';
  provider_transaction_id: string | null;
  completed_at: Date | null;
  created_at: Date;
  /** The reversal's own entry, booked before the refund is asked for. */
  entry_id: string | null;
  /** The payment reversed (read through the payments core). */
  payment: PaymentRow;
}

/**
 * Collection reversals (collection document §2–§4, provider contract §5, §10): accepted as pending, processed by
 * a worker through the rail (the payer refunded, the whole payment entry undone, fee included), then reported
 * by status query and callback.
 */
@Injectable()
export class CollectionReversalsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(MOBILE_MONEY_RAIL) private readonly rail: MobileMoneyRail,
    private readonly ledger: LedgerService,
    private readonly outbox: OutboxService,
    private readonly callbacks: CallbacksService,
    private readonly payments: PaymentsRepository,
    private readonly outcomes: PaymentsService,
  ) {}

  async initiate(principal: GatewayPrincipal, dto: CollectionReversalDto) {
    const reference = dto.reversal_reference;
    const reject = (message: string) => GatewayError.validation(message, { reference });
    try {
      return await this.db.transaction(async (manager) => {
        const [duplicate] = await manager.query(`SELECT 1 FROM collection_reversals WHERE client_id = $1 AND reversal_reference = $2`, [
          principal.clientId,
          reference,
        ]);
        if (duplicate) throw reject(REVERSAL_REJECTIONS.duplicateReference);
        const payment = await this.payments.forReversal(manager, principal.clientId, dto.payment_reference);
        if (!payment) throw reject(REVERSAL_REJECTIONS.invalidPayment);
        const [live] = await manager.query(`SELECT 1 FROM collection_reversals WHERE payment_id = $1 AND status <> 'failed'`, [payment.id]);
        if (live || payment.payment_status === PAYMENT_STATUS.REVERSED) throw reject(REVERSAL_REJECTIONS.alreadyReversed);
        if (payment.payment_status !== PAYMENT_STATUS.SUCCESSFUL || payment.split_status === 'DISTRIBUTED') {
          throw reject(REVERSAL_REJECTIONS.notEligible);
        }
        // A payment of an archived month: its entry can no longer be undone.
        if (!(await this.ledger.hasPostings(manager, payment.entry_id!))) throw reject(REVERSAL_REJECTIONS.notEligible);
        const [created] = await manager.query(
          `INSERT INTO collection_reversals (client_id, reversal_reference, payment_id, reversal_reason) VALUES ($1, $2, $3, $4) RETURNING id`,
          [principal.clientId, reference, payment.id, dto.reversal_reason],
        );
        await this.outbox.enqueue(manager, principal.clientId, TOPICS.processReversal, { reversalId: created.id });
        return {
          status_code: 176,
          status_description: 'Reversal accepted',
          reversal_reference: reference,
          reversal_status: 'pending',
          message: 'Reversal accepted for processing; the result is sent by callback and readable by status query',
        };
      });
    } catch (error) {
      // Two initiations racing: the loser meets the winner on one of the unique indexes.
      if (isUniqueViolation(error, 'collection_reversals_client_id_reversal_reference_key'))
        throw reject(REVERSAL_REJECTIONS.duplicateReference);
      if (isUniqueViolation(error, 'collection_reversals_payment_uq')) throw reject(REVERSAL_REJECTIONS.alreadyReversed);
      throw error;
    }
  }

  async status(principal: GatewayPrincipal, reference: string) {
    const row = await this.load(this.db.manager, `client_id = $1 AND reversal_reference = $2`, [principal.clientId, reference]);
    if (!row) throw GatewayError.notFound();
    return reversalResult(row);
  }

  /**
   * Worker step, run until the reversal is final. A pending reversal starts processing and is looked at again
   * once the operator has had time to act. A processing one is first booked (the whole payment entry undone,
   * so the settlement wallet must cover it: otherwise it fails before any refund is asked for), then refunded
   * through the rail; a refused refund is re-booked by a compensating entry. Each step checks what is already
   * done, so a rerun after a crash neither books nor refunds twice.
   */
  async advance(reversalId: string): Promise<void> {
    const row = await this.load(this.db.manager, `id = $1`, [reversalId]);
    if (!row) return;
    if (row.status === 'pending') {
      await this.db.transaction(async (manager) => {
        const [, moved] = await manager.query(
          `UPDATE collection_reversals SET status = 'processing' WHERE client_id = $1 AND id = $2 AND status = 'pending'`,
          [row.client_id, reversalId],
        );
        if (moved)
          await this.outbox.enqueue(
            manager,
            row.client_id,
            TOPICS.processReversal,
            { reversalId },
            new Date(Date.now() + this.rail.settleDelayMs()),
          );
      });
      return;
    }
    if (row.status !== 'processing') return;
    if (!row.entry_id && !(await this.book(row.client_id, reversalId))) return;
    const { payment } = row;
    const refund = await this.rail.refund({
      reversalId,
      charge: {
        paymentId: payment.id,
        clientId: payment.client_id,
        payerMsisdn: payment.payer_msisdn,
        amount: payment.total_amount,
        currency: payment.currency,
      },
      operatorReference: payment.payer_transaction_id,
    });
    // The operator answers later: the answer's follow-up job runs this step again.
    if (refund.status === 'PENDING') return;
    await this.db.transaction(async (manager) => {
      const locked = (await this.load(manager, `client_id = $1 AND id = $2`, [row.client_id, reversalId], true))!;
      if (locked.status !== 'processing') return;
      if (refund.status === 'FAILED') {
        const compensation = await this.ledger.reverseEntry(
          manager,
          locked.client_id,
          locked.entry_id!,
          JOURNAL_ENTRY_KIND.COLLECTION_REVERSAL_COMPENSATION,
        );
        await this.finish(manager, locked, 'failed', { failure_reason: refund.reason, compensation_entry_id: compensation.entryId });
        return;
      }
      await this.finish(manager, locked, 'successful', { provider_transaction_id: refund.operatorReference });
      await this.outcomes.reverse(manager, locked.payment);
    });
  }

  /**
   * Books the reversal (undoes the payment's entry). False when it cannot be: the settlement wallet cannot cover it,
   * or the payment's month was archived after the reversal was accepted.
   */
  private async book(clientId: string, reversalId: string): Promise<boolean> {
    let failure: string;
    try {
      await this.db.transaction(async (manager) => {
        const locked = (await this.load(manager, `client_id = $1 AND id = $2`, [clientId, reversalId], true))!;
        if (locked.status !== 'processing' || locked.entry_id) return;
        const posted = await this.ledger.reverseEntry(
          manager,
          locked.client_id,
          locked.payment.entry_id!,
          JOURNAL_ENTRY_KIND.COLLECTION_REVERSAL,
        );
        await manager.query(`UPDATE collection_reversals SET entry_id = $3 WHERE client_id = $1 AND id = $2`, [
          clientId,
          reversalId,
          posted.entryId,
        ]);
      });
      return true;
    } catch (error) {
      if (error instanceof FloorBreachError) failure = 'Insufficient balance in the settlement wallet';
      else if (error instanceof UnknownLedgerEntryError) failure = 'The payment is archived and can no longer be reversed';
      else throw error;
    }
    await this.db.transaction(async (manager) => {
      const locked = (await this.load(manager, `client_id = $1 AND id = $2`, [clientId, reversalId], true))!;
      if (locked.status === 'processing' && !locked.entry_id) await this.finish(manager, locked, 'failed', { failure_reason: failure });
    });
    return false;
  }

  /** A reversal with the payment it reverses; `where` is on collection_reversals. */
  private async load(manager: EntityManager, where: string, params: unknown[], lock = false): Promise<ReversalRow | null> {
    const [row] = await manager.query(`SELECT * FROM collection_reversals WHERE ${where} ${lock ? 'FOR UPDATE' : ''}`, params);
    if (!row) return null;
    return { ...row, payment: (await this.payments.byId(manager, row.client_id, row.payment_id))! };
  }

  /** Makes the reversal final and reports it; the callback shows the stored completion time, as the status query does. */
  private async finish(
    manager: EntityManager,
    reversal: ReversalRow,
    status: 'successful' | 'failed',
    fields: { provider_transaction_id?: string; failure_reason?: string; compensation_entry_id?: string },
  ): Promise<void> {
    const [[completed]] = await manager.query(
      `UPDATE collection_reversals SET status = $3, provider_transaction_id = $4, failure_reason = $5, compensation_entry_id = $6,
         completed_at = now() WHERE client_id = $1 AND id = $2 RETURNING completed_at`,
      [
        reversal.client_id,
        reversal.id,
        status,
        fields.provider_transaction_id ?? null,
        fields.failure_reason ?? null,
        fields.compensation_entry_id ?? null,
      ],
    );
    await this.announce(manager, {
      ...reversal,
      status,
      provider_transaction_id: fields.provider_transaction_id ?? null,
      completed_at: completed.completed_at,
    });
  }

  /** The reversal result goes to the merchant's configured callback URL, when there is one. */
  private async announce(manager: EntityManager, reversal: ReversalRow): Promise<void> {
    await this.callbacks.schedule(manager, {
      clientId: reversal.client_id,
      kind: 'collections',
      event: 'reversal_result',
      reference: reversal.reversal_reference,
      urls: [],
      toClientEndpoint: true,
      payload: reversalResult(reversal),
    });
  }
}

function reversalResult(row: ReversalRow) {
  return {
    reversal_reference: row.reversal_reference,
    provider_transaction_id: row.provider_transaction_id,
    reversal_status: row.status,
    reversal_amount: formatAmount(row.payment.total_amount),
    currency_code: row.payment.currency,
    reversal_date: new Date(row.completed_at ?? row.created_at).toISOString(),
    receiver_narration: row.payment.description,
  };
}
