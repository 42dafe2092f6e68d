import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource } from 'typeorm';
import { AirtimeProcessingService } from '../airtime/airtime-processing.service';
import { CollectionReversalsService } from '../collection-reversals/collection-reversals.service';
import { ChargeResolutionError, PaymentSettlementService } from '../collections/payment-settlement.service';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { PayoutSettlementService } from '../payouts/payout-settlement.service';
import { AfricasTalkingGateway } from '../rails/africastalking/africastalking-gateway';
import { JengaGateway } from '../rails/jenga/jenga-gateway';
import { MpesaGateway } from '../rails/mpesa/mpesa-gateway';
import { RailRequestsRepository, type ReconcilingGateway } from '../rails/rail-requests.repository';
import {
  OPERATOR_STATEMENTS,
  type OperatorMovement,
  type OperatorStatement,
  type OurMovement,
  type ReconciledRail,
  type ReconciliationPeriod,
} from '../rails/operator-statement';
import { matchMovements, type MatchedRow, ourKey, RECON_OUTCOMES } from './matching';
import { OurMovementsRepository } from './our-movements.repository';
import { type BalanceLine, ReconciliationRepository, type ReconRow, type RunRow } from './reconciliation.repository';

export const RECONCILED_RAILS: readonly ReconciledRail[] = ['mpesa', 'jenga', 'africastalking'];

/** Amount and fee of the holds still HELD for payouts and top-ups of the rail: reserved, not yet paid or given back. */
const HELD_FOR: Record<ReconciledRail, string> = {
  mpesa: `SELECT coalesce(sum(h.amount + h.fee), 0)::text AS held FROM payouts o JOIN float_holds h ON h.client_id = o.client_id AND h.id = o.hold_id
           WHERE h.status = 'HELD' AND o.destination_type NOT IN ('BANK', 'BANK_ACCOUNT_NUMBER') AND o.currency = $1`,
  jenga: `SELECT coalesce(sum(h.amount + h.fee), 0)::text AS held FROM payouts o JOIN float_holds h ON h.client_id = o.client_id AND h.id = o.hold_id
           WHERE h.status = 'HELD' AND o.destination_type IN ('BANK', 'BANK_ACCOUNT_NUMBER') AND o.currency = $1`,
  africastalking: `SELECT coalesce(sum(h.amount + h.fee), 0)::text AS held FROM airtime_recipients a
            JOIN airtime_requests q ON q.client_id = a.client_id AND q.id = a.request_id
            JOIN float_holds h ON h.client_id = a.client_id AND h.id = a.hold_id
           WHERE h.status = 'HELD' AND q.currency = $1`,
};

/** The subject_kind of rail requests about each kind of movement. */
const REQUEST_SUBJECT: Record<OurMovement['kind'], string> = {
  CHARGE: 'PAYMENT',
  REFUND: 'REVERSAL',
  PAYOUT: 'PAYOUT',
  AIRTIME: 'AIRTIME',
};

/** The error a person's command gets: a clear line, never a stack. */
export class ReconciliationError extends Error {}

/**
 * A reconciliation run: what the operator reports for a rail and period against what we hold, one to one; every
 * difference our own status query can settle is asked about through the record's existing path (never credited from
 * the statement alone), then matched again; the rest stays open with its evidence, kept under its key so that a rerun
 * never doubles it, for a person to resolve.
 */
@Injectable()
export class ReconciliationService {
  private readonly statements: Map<ReconciledRail, OperatorStatement>;
  private readonly gateways: Map<string, ReconcilingGateway>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly ours: OurMovementsRepository,
    private readonly runs: ReconciliationRepository,
    private readonly payments: PaymentSettlementService,
    private readonly payouts: PayoutSettlementService,
    private readonly airtime: AirtimeProcessingService,
    private readonly reversals: CollectionReversalsService,
    private readonly requests: RailRequestsRepository,
    @Optional() @Inject(OPERATOR_STATEMENTS) statements: OperatorStatement[] | null,
    @Optional() @Inject(MpesaGateway) mpesa: MpesaGateway | null,
    @Optional() @Inject(JengaGateway) jenga: JengaGateway | null,
    @Optional() @Inject(AfricasTalkingGateway) africastalking: AfricasTalkingGateway | null,
  ) {
    this.statements = new Map((statements ?? []).map((statement) => [statement.rail, statement]));
    this.gateways = new Map([mpesa, jenga, africastalking].filter((g): g is NonNullable<typeof g> => !!g).map((g) => [g.rail, g]));
  }

  /** The rails with an operator statement to reconcile against. */
  rails(): ReconciledRail[] {
    return RECONCILED_RAILS.filter((rail) => this.statements.has(rail));
  }

  async run(rail: ReconciledRail, period: ReconciliationPeriod, by: string, statement = this.statements.get(rail)): Promise<RunRow> {
    if (!statement) throw new ReconciliationError(`no operator statement is configured for rail ${rail}`);
    const run = await this.runs.start(rail, period, by);
    // Ours with a window's slack either side, so a row the operator dates just across midnight still finds its pair.
    const slack = this.config.reconMatchWindowMs;
    const loadOurs = () =>
      this.ours.load(rail, { from: new Date(period.from.getTime() - slack), to: new Date(period.to.getTime() + slack) });
    const options = { ...period, windowMs: slack };
    let theirs: OperatorMovement[];
    let ours: OurMovement[];
    try {
      ours = await loadOurs();
      theirs = await statement.movements(period, ours);
    } catch (error) {
      return this.runs.finish(run.id, 'INCOMPLETE', `the operator's statement failed: ${(error as Error).message}`, {});
    }
    let rows = matchMovements(ours, theirs, options);
    const asked = await this.askAbout(rows);
    if (asked.size > 0) rows = matchMovements(await loadOurs(), theirs, options);

    await this.runs.keep(run, rows, evidenceOf);
    const settled = await this.runs.closeGone(run, asked);
    const outcomes = Object.fromEntries(RECON_OUTCOMES.map((o) => [o, rows.filter((row) => row.outcome === o).length]));
    const counts = { outcomes, operator_rows: theirs.length, our_movements: ours.length, asked: asked.size, settled };

    const balance = await this.balanceLine(rail, statement).catch((error: Error) => error);
    if (balance instanceof Error)
      return this.runs.finish(run.id, 'INCOMPLETE', `the operator's balance failed: ${balance.message}`, counts);
    await this.runs.recordBalance(run.id, balance);
    return this.runs.finish(run.id, 'COMPLETE', null, counts);
  }

  /**
   * Asks the operator, through each record's own status path, about every difference where we hold the movement as
   * pending: the answer is booked as the operator's callback would be. Answers the keys asked about.
   */
  private async askAbout(rows: MatchedRow[]): Promise<Set<string>> {
    const asked = new Set<string>();
    for (const row of rows) {
      if (row.outcome === 'MATCHED' || row.outcome === 'MISSING_AT_US' || row.ours?.status !== 'PENDING') continue;
      const { kind, recordId } = row.ours;
      await this.askOperator(row.ours);
      if (kind === 'CHARGE') await this.payments.settle(recordId);
      else if (kind === 'PAYOUT') await this.payouts.recheck([recordId]);
      else if (kind === 'AIRTIME') await this.airtime.recheck([recordId]);
      else await this.reversals.advance(recordId);
      asked.add(ourKey(row.ours));
    }
    return asked;
  }

  /**
   * A real operator is asked now about each request of ours about the movement that has no final answer (its status
   * query, as the rail's own reconciliation would ask once due); the record's path then books the answer.
   */
  private async askOperator(movement: OurMovement): Promise<void> {
    const open: { id: string }[] = await this.db.query(
      `SELECT id::text AS id FROM rail_requests WHERE client_id = $1 AND subject_kind = $2 AND subject_id = $3
          AND (outcome IS NULL OR outcome = 'JAMMED') ORDER BY created_at`,
      [movement.clientId, REQUEST_SUBJECT[movement.kind], movement.recordId],
    );
    for (const { id } of open) {
      const request = await this.requests.byId(id);
      const gateway = request && this.gateways.get(request.rail);
      if (gateway) await gateway.reconcile(request);
    }
  }

  /**
   * The balance line as a roll-forward (docs/decisions.md, "Reconciliation"): the operator's balance at the opening
   * (the rail's previous complete run, or an opening a person set with recon:opening) plus our movements of the rail
   * that succeeded from then to the balance's instant, IN minus OUT, is what the operator should hold now; the
   * difference is what it reports beyond that. What is in flight (held for payouts and top-ups not yet answered) is
   * shown beside it. Without an opening the line has no expected balance: this run's becomes the next one's opening.
   */
  private async balanceLine(rail: ReconciledRail, statement: OperatorStatement): Promise<BalanceLine> {
    const operator = await statement.balance();
    // Our clock, as our movements' times are: the operator's own time (seconds, its clock) stays in the evidence.
    const at = new Date();
    const [{ held }] = await this.db.query(HELD_FOR[rail], [operator.currency]);
    const inFlight = new Decimal(held).toFixed(4);
    const opening = await this.runs.opening(rail, operator.currency, at);
    if (!opening) return { operator, at, opening: null, movements: null, expected: null, inFlight, difference: null };
    const movements = await this.ours.netSucceeded(rail, operator.currency, { from: opening.at, to: at });
    const expected = new Decimal(opening.amount).plus(movements);
    return {
      operator,
      at,
      opening,
      movements: movements.toFixed(4),
      expected: expected.toFixed(4),
      inFlight,
      difference: operator.amount.minus(expected).toFixed(4),
    };
  }

  /**
   * A person's resolution of an open difference, with their name and reason. A payout or top-up still pending at us is
   * finished through its operator-resolution path (`status`: what the operator's evidence says), which posts the
   * ledger entry; that entry is recorded with the resolution. Any other resolution moves no money and is recorded so.
   */
  async resolve(
    rowId: string,
    by: string,
    note: string,
    status: 'SUCCESSFUL' | 'FAILED' | null,
    receipt: string | null = null,
  ): Promise<ReconRow> {
    const row = await this.runs.row(rowId);
    if (!row) throw new ReconciliationError(`reconciliation row ${rowId} not found`);
    if (row.state !== 'OPEN') throw new ReconciliationError(`reconciliation row ${rowId} is ${row.state ?? 'MATCHED'}, not open`);
    const pending = row.our_status === 'PENDING' && row.our_record_id !== null && row.client_id !== null;
    if (status && !pending) throw new ReconciliationError(`--status applies to a movement we hold as pending; row ${rowId} moves no money`);
    if (!status && pending)
      throw new ReconciliationError(`row ${rowId} is pending at us: give --status SUCCESSFUL or FAILED from the operator's evidence`);
    const entryId = status ? await this.finishPending(row, status, receipt) : null;
    const resolved = await this.runs.resolve(rowId, by, note, entryId);
    if (!resolved) throw new ReconciliationError(`reconciliation row ${rowId} was closed meanwhile`);
    return resolved;
  }

  /** The entry of the record's own operator resolution (none for a charge that failed: no money moved). */
  private async finishPending(row: ReconRow, status: 'SUCCESSFUL' | 'FAILED', receipt: string | null): Promise<string | null> {
    const clientId = row.client_id!;
    if (row.our_kind === 'CHARGE') {
      const payment = await this.payments.resolveByOperator(clientId, row.our_record_id!, status, receipt).catch((error: Error) => {
        throw error instanceof ChargeResolutionError ? new ReconciliationError(error.message) : error;
      });
      return payment.entry_id === null ? null : String(payment.entry_id);
    }
    if (row.our_kind === 'PAYOUT') {
      const [payout] = await this.db.query(`SELECT payout_reference FROM payouts WHERE client_id = $1 AND id = $2`, [
        clientId,
        row.our_record_id,
      ]);
      const done = await this.payouts.resolveByOperator(clientId, payout.payout_reference, status);
      const [hold] = await this.db.query(`SELECT outcome_entry_id FROM float_holds WHERE client_id = $1 AND id = $2`, [
        clientId,
        done.hold_id,
      ]);
      return String(hold.outcome_entry_id);
    }
    if (row.our_kind === 'AIRTIME') {
      const [recipient] = await this.db.query(
        `SELECT q.reference, a.phone_number, a.hold_id FROM airtime_recipients a JOIN airtime_requests q ON q.client_id = a.client_id AND q.id = a.request_id
          WHERE a.client_id = $1 AND a.id = $2`,
        [clientId, row.our_record_id],
      );
      await this.airtime.resolveByOperator(clientId, recipient.reference, recipient.phone_number, status);
      const [hold] = await this.db.query(`SELECT outcome_entry_id FROM float_holds WHERE client_id = $1 AND id = $2`, [
        clientId,
        recipient.hold_id,
      ]);
      return String(hold.outcome_entry_id);
    }
    throw new ReconciliationError(
      `a pending ${row.our_kind?.toLowerCase()} is finished by its own command, then the row resolved without --status`,
    );
  }
}

/** What a row keeps as evidence: the operator's row as received and how the pair was found. */
function evidenceOf(row: MatchedRow): Record<string, unknown> {
  return { matched_by: row.matchedBy, operator_row: row.theirs?.evidence ?? null };
}
