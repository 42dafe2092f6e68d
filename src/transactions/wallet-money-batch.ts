import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AmountBounds } from '../client-services/amount-bounds';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { GroupCommit } from '../infra/database/group-commit';
import { isRetryableTransactionError, isUniqueViolation } from '../common/errors/pg-errors';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import type { WalletStatus } from '../wallets/wallet.entity';
import { statesThatMay, type MoneyRole } from '../wallets/wallet-state-machine';
import type { TransactionRow } from './transaction-records';

/**
 * A credit, debit or transfer: its client (wallet_money_batch's p_client_id, one per group) and one item of its
 * p_items, each field named as the SQL reads it.
 */
export interface WalletMoneyRequest {
  client_id: string;
  kind: 'CREDIT' | 'DEBIT' | 'TRANSFER';
  reference: string;
  fingerprint: string;
  /** The credited or debited wallet; a transfer's source. */
  account_number: string;
  destination_account_number: string | null;
  /** Decimal text (exact), in `currency`, which the database converts into the wallet's when they differ. */
  amount: string;
  currency: string;
  service_code: string;
  narration: string | null;
  /** Any JSON; null for none. */
  data: unknown;
  /** ISO 8601. */
  transaction_date: string;
}

type NoDetail = Record<string, never>;

/** Per outcome of wallet_money_batch, the values its answer's detail names (what its refusal is worded with). */
export interface WalletMoneyDetails {
  OK: NoDetail;
  REPLAY: NoDetail;
  CONFLICT: NoDetail;
  SAME_WALLET: NoDetail;
  WALLET_NOT_FOUND: { account_number: string };
  PROFILE_DEACTIVATED: { account_number: string };
  WALLET_STATE: { account_number: string; status: WalletStatus; role: MoneyRole };
  CURRENCY_MISMATCH: NoDetail;
  SERVICE_NOT_FOUND: NoDetail;
  SERVICE_INACTIVE: { service_code: string };
  NO_RATE: { from_currency: string; to_currency: string };
  /** newest_rate_at: ISO 8601, to the microsecond. */
  STALE_RATE: { from_currency: string; to_currency: string; newest_rate_at: string; max_age_ms: number };
  TOO_SMALL: NoDetail;
  AMOUNT_BOUNDS: AmountBounds & { currency: string };
  FEE_TOO_HIGH: { fee: string };
  INSUFFICIENT: { account_number: string };
}

export type WalletMoneyOutcome = keyof WalletMoneyDetails;

/** One answer row of wallet_money_batch (or wallet_fund, which answers some of its outcomes): records for OK and REPLAY. */
export type WalletMoneyAnswer<O extends WalletMoneyOutcome = WalletMoneyOutcome> = {
  [K in O]: { outcome: K; detail: WalletMoneyDetails[K]; records: K extends 'OK' | 'REPLAY' ? TransactionRow[] : null };
}[O];

const WALLET_MONEY_BATCH: PreparedStatement = {
  name: 'wallet_money_batch',
  text: `SELECT outcome, detail, records FROM wallet_money_batch(p_client_id => $1::uuid, p_items => $2::jsonb,
           p_paying_states => $3::text[], p_receiving_states => $4::text[], p_max_rate_age_ms => $5::bigint)`,
};

const MAX_ATTEMPTS = 3;
/**
 * One group out at a time per process and client (a group is one client's, so that on Citus it runs on that
 * client's node): requests that arrive meanwhile make the next group, so under load groups grow large, each costing
 * one call and one commit however many requests it carries, and a process's groups never queue on each other's row
 * locks. Measured against 2 and 4 in flight: 13–35 % more requests per second, with lower
 * p99 (docs/benchmarks.md). API processes still run their groups side by side.
 */
const GROUPS_IN_FLIGHT = 1;
const MAX_GROUP_SIZE = 64;
const PAYING_STATES = statesThatMay('PAY');
const RECEIVING_STATES = statesThatMay('RECEIVE');

/**
 * Wallet credits, debits and transfers, in the wallet's currency or converted, go to the database in groups (group
 * commit): each group is one call of SQL function wallet_money_batch (src/transactions/sql/wallet_money_batch.sql),
 * one transaction, one commit, in which every request is checked, converted, posted and recorded on its own, and
 * answered as it would be had the requests come one after the other.
 */
@Injectable()
export class WalletMoneyBatch {
  /** null: the request shared its group with another of the same reference but another body, and goes again later. */
  private readonly group = new GroupCommit<WalletMoneyRequest, WalletMoneyAnswer | null>((requests) => this.flush(requests), {
    maxItems: MAX_GROUP_SIZE,
    maxInFlight: GROUPS_IN_FLIGHT,
    laneOf: (request) => request.client_id,
  });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async submit(request: WalletMoneyRequest): Promise<WalletMoneyAnswer> {
    return (await this.group.submit(request)) ?? this.submit(request);
  }

  /**
   * Each reference goes to the database once per group. A copy of a request in the same group shares its answer,
   * as it would get arriving just after it (a replay of what it did, or the same refusal); a request reusing the
   * reference with another body waits for a later group, where it meets the first one's record.
   */
  private async flush(requests: WalletMoneyRequest[]): Promise<Array<WalletMoneyAnswer | null>> {
    const firsts = new Map<string, WalletMoneyRequest>();
    for (const request of requests) {
      const key = `${request.client_id}:${request.reference}`;
      if (!firsts.has(key)) firsts.set(key, request);
    }
    const sent = [...firsts.values()];
    const answers = new Map<WalletMoneyRequest, WalletMoneyAnswer>();
    (await this.call(sent)).forEach((answer, i) => answers.set(sent[i], answer));
    return requests.map((request) => {
      const first = firsts.get(`${request.client_id}:${request.reference}`)!;
      if (first !== request && (first.kind !== request.kind || first.fingerprint !== request.fingerprint)) return null;
      const answer = answers.get(first)!;
      return answer.outcome === 'OK' && first !== request ? { ...answer, outcome: 'REPLAY' } : answer;
    });
  }

  /** One call for the group; a failed call (a deadlock, or a reference written by another path meanwhile) is retried. */
  private async call(requests: WalletMoneyRequest[]): Promise<WalletMoneyAnswer[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.run(requests);
      } catch (error) {
        // Nothing of the group committed: each request on its own, so one that collides is answered as a replay.
        if (isUniqueViolation(error) && requests.length > 1) return (await Promise.all(requests.map((r) => this.call([r])))).flat();
        // A lone request whose reference a reversal recorded meanwhile meets that record when run again.
        if ((isRetryableTransactionError(error) || isUniqueViolation(error)) && attempt < MAX_ATTEMPTS) continue;
        throw error;
      }
    }
  }

  /** SQL function wallet_money_batch: one answer per request, in order (the group's requests are of one client). */
  private run(requests: WalletMoneyRequest[]): Promise<WalletMoneyAnswer[]> {
    return runPrepared<WalletMoneyAnswer>(this.db, WALLET_MONEY_BATCH, [
      requests[0].client_id,
      JSON.stringify(requests),
      PAYING_STATES,
      RECEIVING_STATES,
      this.config.fxMaxRateAgeMs,
    ]);
  }
}
