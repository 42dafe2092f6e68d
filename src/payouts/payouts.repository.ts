import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource, EntityManager } from 'typeorm';
import { countRows, dailyTotalsSql, DayTotals, Keyset, ListCount, ListFilter, ListQuery, ListSource, listRows } from '../common/listing';
import type { AmountBounds } from '../client-services/amount-bounds';
import type { InFlightRail } from '../float/float-holds.service';
import { PAYING_STATES, type PayingServiceOutcome } from '../float/paying-service';
import { BatchedCall } from '../infra/database/batched-call';
import { PreparedStatement } from '../infra/database/prepared';
import { TOPICS } from '../infra/queue/queues';
import type { PayoutDestination } from '../rails/payout.rail';
import { PAYOUT_STATUS, PayoutKind, PayoutRow, PayoutStatus, SELECT_PAYOUT } from './payout';

/**
 * A payout request as acceptance takes it: the paying service by code (its float and fee are looked up in the same
 * call), the in-flight account of its rail, and when its processing job is due.
 */
export interface PayoutToAccept {
  clientId: string;
  serviceCode: string;
  kind: PayoutKind;
  payoutReference: string;
  amount: Decimal;
  currency: string;
  /** An IMT's recipient_amount in destination_currency, which its rail pays; null for LOCAL and B2B (they pay `amount`). */
  recipientMoney: { amount: Decimal; currency: string } | null;
  destinationType: PayoutDestination;
  destinationName: string;
  recipientAccountNumber: string;
  recipientPhoneNumber: string | null;
  recipientBankCode: string | null;
  request: object;
  callbackUrl: string;
  rail: InFlightRail;
  processAt: Date;
}

/** One item of payout_accept_batch, amounts as JSON strings. */
interface PayoutAcceptItem {
  service_code: string;
  kind: PayoutKind;
  payout_reference: string;
  amount: string;
  currency: string;
  recipient_amount: string | null;
  recipient_currency: string | null;
  destination_type: PayoutDestination;
  destination_name: string;
  recipient_account_number: string;
  recipient_phone_number: string | null;
  recipient_bank_code: string | null;
  request: object;
  callback_url: string;
  rail: InFlightRail;
  topic: string;
  process_at: Date;
  paying_states: readonly string[];
}

/**
 * payout_accept_batch's answer per payout: its outcome, and in `detail` what the wording of a refusal needs (amounts as Postgres
 * prints them). Only ACCEPTED stored anything; the paying service's refusals are paying_service's. The SQL writes
 * exactly these outcomes (test/disbursements/acceptance-outcomes.spec.ts).
 */
export type PayoutAcceptance =
  | { outcome: 'ACCEPTED'; detail: null }
  | { outcome: 'DUPLICATE'; detail: null }
  | { outcome: PayingServiceOutcome; detail: null }
  | { outcome: 'CURRENCY'; detail: { float_currency: string } }
  | { outcome: 'AMOUNT_BOUNDS'; detail: AmountBounds }
  | { outcome: 'INSUFFICIENT_FLOAT'; detail: { fee: string } };

const ACCEPT_PAYOUTS: PreparedStatement = { name: 'payout_accept_batch', text: 'SELECT * FROM payout_accept_batch($1, $2)' };

/** Where a payout ends up after the rail answered (or an operator decided). */
export interface PayoutTransition {
  status: PayoutStatus;
  railReference?: string | null;
  resultDescription?: string | null;
  floatBalanceAfter?: Decimal | null;
}

/** A payout as the portal lists and exports it. */
export interface PayoutListRow {
  id: string;
  /** created_at as Postgres text (exact to the microsecond), where the next page starts. */
  position_at: string;
  created_at: Date;
  payout_reference: string;
  kind: PayoutKind;
  destination_type: string;
  recipient_account_number: string;
  currency: string;
  amount: string;
  /** The fee the payout cost (CHARGED_FEE_SQL); null when it cost none (not paid out). */
  fee: string | null;
  status: number;
  result_description: string | null;
}

/** A payout as the portal's detail page shows it: the stored row and the fee it cost. */
export type PayoutDetail = PayoutRow & { charged_fee: string | null };

/**
 * The fee a payout has cost: its fee once it was paid out (700). A failed, refunded or still pending payout has
 * cost none (the fee is held with the amount, and given back with it).
 */
const CHARGED_FEE_SQL = `CASE WHEN p.status = ${PAYOUT_STATUS.SUCCESSFUL} THEN p.fee END`;

/** The created_at of the oldest payout still waiting for its rail's final answer (pending or jammed). */
export const OLDEST_UNRESOLVED_PAYOUT_SQL = `SELECT min(created_at) FROM payouts WHERE status IN (${PAYOUT_STATUS.PENDING}, ${PAYOUT_STATUS.JAMMED})`;

/** The portal's list of payouts. */
const LIST: ListSource = {
  select: `p.id::text, p.created_at::text AS position_at, p.created_at, p.payout_reference, p.kind, p.destination_type,
    p.recipient_account_number, p.currency, p.amount, ${CHARGED_FEE_SQL} AS fee, p.status, p.result_description`,
  from: 'payouts p WHERE p.client_id = $1',
  columns: {
    createdAt: 'p.created_at',
    id: 'p.id',
    idType: 'bigint',
    status: 'p.status',
    reference: 'p.payout_reference',
    phones: ['p.recipient_account_number', 'p.recipient_phone_number'],
    amounts: ['p.amount'],
  },
};

/** The only owner of the payouts table: every statement on it is here. */
@Injectable()
export class PayoutsRepository {
  private readonly acceptance: BatchedCall<PayoutAcceptance, PayoutAcceptItem>;

  constructor(@InjectDataSource() db: DataSource) {
    this.acceptance = new BatchedCall(db, ACCEPT_PAYOUTS);
  }

  /**
   * Accepts a payout in one call: the paying service's checks, the reference (looked up under the float's lock, so a
   * concurrent duplicate answers DUPLICATE without touching the float), amount + fee reserved from the float, the
   * payout with its hold, and its processing job, committed together or not at all. The call is shared with the
   * payouts accepted at the same moment (group commit), which lock the float once between them.
   * SQL: src/payouts/sql/payout_accept_batch.sql.
   */
  accept(p: PayoutToAccept): Promise<PayoutAcceptance> {
    return this.acceptance.call(p.clientId, {
      service_code: p.serviceCode,
      kind: p.kind,
      payout_reference: p.payoutReference,
      amount: p.amount.toFixed(),
      currency: p.currency,
      recipient_amount: p.recipientMoney?.amount.toFixed() ?? null,
      recipient_currency: p.recipientMoney?.currency ?? null,
      destination_type: p.destinationType,
      destination_name: p.destinationName,
      recipient_account_number: p.recipientAccountNumber,
      recipient_phone_number: p.recipientPhoneNumber,
      recipient_bank_code: p.recipientBankCode,
      request: p.request,
      callback_url: p.callbackUrl,
      rail: p.rail,
      topic: TOPICS.processPayout,
      process_at: p.processAt,
      paying_states: PAYING_STATES,
    });
  }

  async byId(manager: EntityManager, id: string, lock = false): Promise<PayoutRow | null> {
    const [row] = await manager.query(`${SELECT_PAYOUT} WHERE p.id = $1 ${lock ? 'FOR UPDATE OF p' : ''}`, [id]);
    return row ?? null;
  }

  /** The client's payout with this reference, among the given kinds (B2B and the others have status routes of their own). */
  async byReference(
    manager: EntityManager,
    clientId: string,
    reference: string,
    kinds: PayoutKind[],
    lock = false,
  ): Promise<PayoutRow | null> {
    const [row] = await manager.query(
      `${SELECT_PAYOUT} WHERE p.client_id = $1 AND p.payout_reference = $2 AND p.kind = ANY ($3) ${lock ? 'FOR UPDATE OF p' : ''}`,
      [clientId, reference, kinds],
    );
    return row ?? null;
  }

  /** The payouts with these ids (read without locks, to ask the rail). */
  async byIds(manager: EntityManager, ids: string[]): Promise<PayoutRow[]> {
    return manager.query(`${SELECT_PAYOUT} WHERE p.id = ANY($1::bigint[]) ORDER BY p.id`, [ids]);
  }

  /** The client's payouts with these ids under their row locks, taken in id order (so two groups never deadlock). */
  async lockMany(manager: EntityManager, clientId: string, ids: string[]): Promise<PayoutRow[]> {
    return manager.query(`${SELECT_PAYOUT} WHERE p.client_id = $2 AND p.id = ANY($1::bigint[]) ORDER BY p.id FOR UPDATE OF p`, [
      ids,
      clientId,
    ]);
  }

  /** The rail was asked and these payouts are still pending or jammed: remember when, for reconciliation. */
  async markChecked(manager: EntityManager, checked: Array<{ clientId: string; id: string; status: PayoutStatus }>): Promise<void> {
    if (checked.length === 0) return;
    await manager.query(
      `UPDATE payouts p SET status = c.status, checked_at = now(), updated_at = now()
       FROM unnest($1::uuid[], $2::bigint[], $3::smallint[]) c(client_id, id, status) WHERE p.client_id = c.client_id AND p.id = c.id`,
      [checked.map((c) => c.clientId), checked.map((c) => c.id), checked.map((c) => c.status)],
    );
  }

  /** Moves payouts to their final status; the caller holds the row locks. Returns the payouts as they now read, in id order. */
  async finish(manager: EntityManager, transitions: Array<PayoutTransition & { clientId: string; id: string }>): Promise<PayoutRow[]> {
    if (transitions.length === 0) return [];
    await manager.query(
      `UPDATE payouts p SET status = t.status, rail_reference = coalesce(t.rail_reference, p.rail_reference),
         result_description = t.result_description, float_balance_after = coalesce(t.float_balance_after, p.float_balance_after),
         -- least, not coalesce: Citus refuses a clock inside CASE or COALESCE in an UPDATE.
         transaction_time = now(), checked_at = least(p.checked_at, now()), updated_at = now()
       FROM unnest($1::uuid[], $2::bigint[], $3::smallint[], $4::text[], $5::text[], $6::numeric[])
         t(client_id, id, status, rail_reference, result_description, float_balance_after)
       WHERE p.client_id = t.client_id AND p.id = t.id`,
      [
        transitions.map((t) => t.clientId),
        transitions.map((t) => t.id),
        transitions.map((t) => t.status),
        transitions.map((t) => t.railReference ?? null),
        transitions.map((t) => t.resultDescription ?? null),
        transitions.map((t) => t.floatBalanceAfter?.toFixed() ?? null),
      ],
    );
    return this.byIds(
      manager,
      transitions.map((t) => t.id),
    );
  }

  /** When the rail was last asked about the payout still pending or jammed that was asked longest ago; null when none. */
  async oldestChecked(manager: EntityManager): Promise<Date | null> {
    const [row] = await manager.query(
      `SELECT min(checked_at) AS at FROM payouts WHERE status IN (${PAYOUT_STATUS.PENDING}, ${PAYOUT_STATUS.JAMMED})`,
    );
    return row?.at ? new Date(row.at) : null;
  }

  /** The clients with payouts still pending or jammed whose rail was last asked before `checkedBefore` (a plain read). */
  async clientsToRecheck(manager: EntityManager, checkedBefore: Date): Promise<string[]> {
    const rows: Array<{ client_id: string }> = await manager.query(
      `SELECT DISTINCT client_id FROM payouts WHERE status IN (${PAYOUT_STATUS.PENDING}, ${PAYOUT_STATUS.JAMMED}) AND checked_at < $1`,
      [checkedBefore],
    );
    return rows.map((r) => r.client_id);
  }

  /**
   * Claims up to `limit` of the client's submitted payouts still pending or jammed whose rail was last asked before
   * `checkedBefore`, oldest first, by stamping them as asked now: concurrent workers claim disjoint batches (SKIP LOCKED).
   */
  async claimForRecheck(manager: EntityManager, clientId: string, checkedBefore: Date, limit: number): Promise<string[]> {
    // An UPDATE answers [rows, count] through TypeORM.
    const [rows]: [Array<{ id: string }>, number] = await manager.query(
      `UPDATE payouts SET checked_at = now() WHERE client_id = $3 AND id IN (
         SELECT id FROM payouts
         WHERE client_id = $3 AND status IN (${PAYOUT_STATUS.PENDING}, ${PAYOUT_STATUS.JAMMED}) AND checked_at < $1
         ORDER BY checked_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [checkedBefore, limit, clientId],
    );
    return rows.map((r) => String(r.id));
  }

  /** The client's payouts (local, IMT, B2B), newest first, filtered and keyset-paged (the portal's list and CSV export). */
  list(manager: EntityManager, clientId: string, query: ListQuery): Promise<PayoutListRow[]> {
    return listRows(manager, clientId, query, LIST);
  }

  /** How many of the client's payouts the filter matches, and how many are newer than `first`. */
  count(manager: EntityManager, clientId: string, filter: ListFilter, first: Keyset | null): Promise<ListCount> {
    return countRows(manager, clientId, filter, LIST, first);
  }

  /** One of the client's payouts with the fee it cost; null when the client has none with this id. */
  async detail(manager: EntityManager, clientId: string, id: string): Promise<PayoutDetail | null> {
    if (!/^\d{1,18}$/.test(id)) return null;
    const [row] = await manager.query(
      `SELECT p.*, ${CHARGED_FEE_SQL} AS charged_fee FROM (${SELECT_PAYOUT} WHERE p.client_id = $1 AND p.id = $2) p`,
      [clientId, id],
    );
    return row ?? null;
  }

  /** The client's payouts per day of the last `days` days in `timeZone`, per currency (the portal's overview). */
  dailyTotals(manager: EntityManager, clientId: string, timeZone: string, days: number): Promise<DayTotals[]> {
    return manager.query(dailyTotalsSql('payouts', 'amount', 'status', PAYOUT_STATUS.SUCCESSFUL), [clientId, timeZone, days]);
  }
}
