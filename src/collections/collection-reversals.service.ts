import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { CallbacksService } from '../callbacks/callbacks.service';
import { CallbackSettingsService } from '../callbacks/callback-settings.service';
import { GatewayError } from '../common/errors/gateway-error';
import { formatAmount, Money } from '../common/money';
import { isUniqueViolation } from '../infra/database/pg-errors';
import { OutboxService } from '../infra/queue/outbox.service';
import { TOPICS } from '../infra/queue/queues';
import { EntryBuilder } from '../ledger/entry-builder';
import { FloorBreachError } from '../ledger/ledger.errors';
import { LedgerService } from '../ledger/ledger.service';
import { MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../rails/mobile-money.rail';
import { CheckoutService } from './checkout.service';
import { PAYMENT_STATUS } from './payment';

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
  service_amount: string;
  total_amount: string;
  currency: string;
  payer_msisdn: string;
  description: string;
  /** The reversal's own entry, booked before the refund is asked for. */
  entry_id: string | null;
  payment_entry_id: string;
  checkout_session_id: string | null;
}

const SELECT_REVERSAL = `
  SELECT r.*, p.service_amount, p.total_amount, p.currency, p.payer_msisdn, p.description, p.entry_id AS payment_entry_id,
    p.checkout_session_id
  FROM collection_reversals r JOIN payments p ON p.id = r.payment_id`;

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
    private readonly callbackSettings: CallbackSettingsService,
    private readonly checkout: CheckoutService,
  ) {}

  async initiate(principal: GatewayPrincipal, body: { reversal_reference?: unknown; payment_reference?: unknown; reversal_reason?: unknown }) {
    const reference = typeof body?.reversal_reference === 'string' ? body.reversal_reference : '';
    const reject = (message: string) => GatewayError.validation(message, { reference });
    if (!reference || reference.length > 64) throw reject('reversal_reference is required (at most 64 characters)');
    if (typeof body.payment_reference !== 'string' || !body.payment_reference || body.payment_reference.length > 64) {
      throw reject('payment_reference is required (at most 64 characters)');
    }
    if (typeof body.reversal_reason !== 'string' || !body.reversal_reason.trim() || body.reversal_reason.length > 255) {
      throw reject('reversal_reason is required (at most 255 characters)');
    }
    const paymentReference = body.payment_reference;
    const reason = body.reversal_reason;
    try {
      return await this.db.transaction(async (manager) => {
        const [duplicate] = await manager.query(
          `SELECT 1 FROM collection_reversals WHERE client_id = $1 AND reversal_reference = $2`,
          [principal.clientId, reference],
        );
        if (duplicate) throw reject(REVERSAL_REJECTIONS.duplicateReference);
        // A checkout's payments share its reference: the successful one is the one that can be reversed.
        const [payment] = await manager.query(
          `SELECT id, payment_status, split_status FROM payments WHERE client_id = $1 AND external_reference = $2
           ORDER BY (payment_status = 700) DESC, (payment_status = 702) DESC, id DESC LIMIT 1 FOR UPDATE`,
          [principal.clientId, paymentReference],
        );
        if (!payment) throw reject(REVERSAL_REJECTIONS.invalidPayment);
        const [live] = await manager.query(`SELECT 1 FROM collection_reversals WHERE payment_id = $1 AND status <> 'failed'`, [payment.id]);
        if (live || payment.payment_status === PAYMENT_STATUS.REVERSED) throw reject(REVERSAL_REJECTIONS.alreadyReversed);
        if (payment.payment_status !== PAYMENT_STATUS.SUCCESSFUL || payment.split_status === 'DISTRIBUTED') {
          throw reject(REVERSAL_REJECTIONS.notEligible);
        }
        const [created] = await manager.query(
          `INSERT INTO collection_reversals (client_id, reversal_reference, payment_id, reversal_reason) VALUES ($1, $2, $3, $4) RETURNING id`,
          [principal.clientId, reference, payment.id, reason],
        );
        await this.outbox.enqueue(manager, TOPICS.processReversal, { reversalId: created.id });
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
      if (isUniqueViolation(error, 'collection_reversals_client_id_reversal_reference_key')) throw reject(REVERSAL_REJECTIONS.duplicateReference);
      if (isUniqueViolation(error, 'collection_reversals_payment_uq')) throw reject(REVERSAL_REJECTIONS.alreadyReversed);
      throw error;
    }
  }

  async status(principal: GatewayPrincipal, reference: string) {
    const [row]: ReversalRow[] = await this.db.query(`${SELECT_REVERSAL} WHERE r.client_id = $1 AND r.reversal_reference = $2`, [
      principal.clientId,
      reference,
    ]);
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
    const [row]: ReversalRow[] = await this.db.query(`${SELECT_REVERSAL} WHERE r.id = $1`, [reversalId]);
    if (!row) return;
    if (row.status === 'pending') {
      await this.db.transaction(async (manager) => {
        const [, moved] = await manager.query(`UPDATE collection_reversals SET status = 'processing' WHERE id = $1 AND status = 'pending'`, [reversalId]);
        if (moved) await this.outbox.enqueue(manager, TOPICS.processReversal, { reversalId }, new Date(Date.now() + this.rail.settleDelayMs()));
      });
      return;
    }
    if (row.status !== 'processing') return;
    if (!row.entry_id && !(await this.book(reversalId))) return;
    const refund = await this.rail.refund({ paymentId: row.payment_id, payerMsisdn: row.payer_msisdn, amount: row.total_amount, currency: row.currency });
    await this.db.transaction(async (manager) => {
      const [locked]: ReversalRow[] = await manager.query(`${SELECT_REVERSAL} WHERE r.id = $1 FOR UPDATE OF r`, [reversalId]);
      if (locked.status !== 'processing') return;
      if (refund.status === 'FAILED') {
        const compensation = await this.postUndoOf(manager, locked.client_id, locked.entry_id!, 'COLLECTION_REVERSAL_COMPENSATION');
        await this.finish(manager, locked, 'failed', { failure_reason: refund.reason, compensation_entry_id: compensation });
        return;
      }
      await this.finish(manager, locked, 'successful', { provider_transaction_id: refund.operatorReference });
      await manager.query(`UPDATE payments SET payment_status = $2, updated_at = now() WHERE id = $1`, [locked.payment_id, PAYMENT_STATUS.REVERSED]);
      if (locked.checkout_session_id) await this.checkout.onPaymentReversed(manager, locked.checkout_session_id);
    });
  }

  /** Books the reversal (undoes the payment's entry). False when the settlement wallet cannot cover it. */
  private async book(reversalId: string): Promise<boolean> {
    try {
      await this.db.transaction(async (manager) => {
        const [locked]: ReversalRow[] = await manager.query(`${SELECT_REVERSAL} WHERE r.id = $1 FOR UPDATE OF r`, [reversalId]);
        if (locked.status !== 'processing' || locked.entry_id) return;
        const entryId = await this.postUndoOf(manager, locked.client_id, locked.payment_entry_id, 'COLLECTION_REVERSAL');
        await manager.query(`UPDATE collection_reversals SET entry_id = $2 WHERE id = $1`, [reversalId, entryId]);
      });
      return true;
    } catch (error) {
      if (!(error instanceof FloorBreachError)) throw error;
      await this.db.transaction(async (manager) => {
        const [locked]: ReversalRow[] = await manager.query(`${SELECT_REVERSAL} WHERE r.id = $1 FOR UPDATE OF r`, [reversalId]);
        if (locked.status === 'processing' && !locked.entry_id) {
          await this.finish(manager, locked, 'failed', { failure_reason: 'Insufficient balance in the settlement wallet' });
        }
      });
      return false;
    }
  }

  /** Posts the exact opposite of an entry. */
  private async postUndoOf(manager: EntityManager, clientId: string, entryId: string, kind: string): Promise<string> {
    const postings: Array<{ account_id: string; amount: string }> = await manager.query(`SELECT account_id, amount FROM postings WHERE entry_id = $1`, [
      entryId,
    ]);
    const entry = new EntryBuilder();
    for (const p of postings) entry.debit(p.account_id, new Money(p.amount));
    return (await this.ledger.postEntry(manager, { clientId, kind, lines: entry.lines() })).entryId;
  }

  /** Makes the reversal final and reports it; the callback shows the stored completion time, as the status query does. */
  private async finish(
    manager: EntityManager,
    reversal: ReversalRow,
    status: 'successful' | 'failed',
    fields: { provider_transaction_id?: string; failure_reason?: string; compensation_entry_id?: string },
  ): Promise<void> {
    const [[completed]] = await manager.query(
      `UPDATE collection_reversals SET status = $2, provider_transaction_id = $3, failure_reason = $4, compensation_entry_id = $5,
         completed_at = now() WHERE id = $1 RETURNING completed_at`,
      [reversal.id, status, fields.provider_transaction_id ?? null, fields.failure_reason ?? null, fields.compensation_entry_id ?? null],
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
    const endpoint = await this.callbackSettings.endpointFor(manager, reversal.client_id, 'collections');
    if (!endpoint) return;
    await this.callbacks.schedule(manager, {
      clientId: reversal.client_id,
      kind: 'collections',
      event: 'reversal_result',
      reference: reversal.reversal_reference,
      urls: [endpoint.url],
      payload: reversalResult(reversal),
    });
  }
}

function reversalResult(row: ReversalRow) {
  return {
    reversal_reference: row.reversal_reference,
    provider_transaction_id: row.provider_transaction_id,
    reversal_status: row.status,
    reversal_amount: formatAmount(row.total_amount),
    currency_code: row.currency,
    reversal_date: new Date(row.completed_at ?? row.created_at).toISOString(),
    receiver_narration: row.description,
  };
}
