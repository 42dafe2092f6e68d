import { HttpException, Inject, Injectable, Logger, NotFoundException, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { withTimeout } from '../../common/with-timeout';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EngineMetrics } from '../metrics/engine-metrics';
import { isDatabaseUnavailable, sqlState } from '../../common/errors/pg-errors';

/** How long one measure of the replica's lag is trusted: reads in between are routed without asking again. */
const REPLICA_CHECK_INTERVAL_MS = 1000;
/** A replica that does not answer the lag check within this long counts as down. */
const CHECK_TIMEOUT_MS = 1000;
/** A read waits this long for a replica connection before it fails over to the primary. */
const CONNECT_TIMEOUT_MS = 2000;
/** While the replica stays skipped, its log line is repeated at most this often. */
const LOG_EVERY_MS = 60_000;

/**
 * The replica's lag in milliseconds. A replica that has replayed all the WAL it received, with its WAL receiver
 * running (streaming from the primary), is current: 0. Otherwise the age of the last transaction it replayed,
 * which bounds from above how old its view is (every transaction it has not replayed committed after that one).
 * `now() - pg_last_xact_replay_timestamp()` alone grows on an idle primary while the replica misses nothing, hence
 * the LSN comparison first. A replica without a WAL receiver (its primary unreachable, or fed from an archive) is
 * measured by that age alone, so it is skipped once nothing has been replayed for DATABASE_READ_MAX_LAG_MS: it may
 * be missing anything written since. Not counted: WAL the primary wrote but has not yet sent (streamed as it is
 * written, normally well under a second). A server not in recovery (a promoted replica) is current by definition.
 */
const LAG_SQL = `
  SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() AND EXISTS (SELECT FROM pg_stat_wal_receiver) THEN 0
    ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000, 'Infinity')
  END::float8 AS lag_ms`;

type SkipReason = 'lag' | 'down';

/**
 * The optional streaming replica (DATABASE_READ_URL, provider contract §12): account statements, POST /v1/statement,
 * wallet transaction history and the portal's lists and CSV exports read from it; everything else reads the
 * primary: money decisions and idempotency lookups must see every committed write (a replayed request found
 * missing would move money twice), and status queries are asked right after the write they follow (read-your-writes:
 * a replica could answer 404 or an older status). A read is sent to the replica only while its last lag check (at
 * most REPLICA_CHECK_INTERVAL_MS old) found it answering and at most DATABASE_READ_MAX_LAG_MS behind; otherwise to
 * the primary, counted by reason in paygate_read_replica_skipped_total and logged. Without DATABASE_READ_URL every
 * read goes to the primary.
 */
@Injectable()
export class ReadReplica implements OnApplicationShutdown {
  private readonly logger = new Logger(ReadReplica.name);
  private readonly replica: DataSource | null;
  private initializing: Promise<DataSource> | null = null;
  private checking: Promise<void> | null = null;
  private checkedAt = -Infinity;
  /** Why the replica is skipped now; null while it is used (never before the first check: checkedAt forces one). */
  private skip: SkipReason | null = null;
  private loggedAt = -Infinity;

  constructor(
    @InjectDataSource() private readonly primary: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: EngineMetrics,
  ) {
    // Connected on the first read: processes that serve none (workers) never open the replica's pool.
    this.replica = config.databaseReadUrl
      ? new DataSource({
          type: 'postgres',
          url: config.databaseReadUrl,
          synchronize: false,
          logging: false,
          extra: { max: config.dbPoolSize, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'paygate-read' },
        })
      : null;
  }

  /**
   * Runs `read` on the replica when it is current enough, else on the primary. A read the replica fails (its
   * connection lost, a conflict with recovery) is run once more on the primary, and the replica is skipped until
   * its next check. A 404 from the replica is asked again of the primary: the thing may be younger than its lag.
   * Errors of the query itself are the caller's, as they would be on the primary.
   */
  async read<T>(read: (db: DataSource) => Promise<T>): Promise<T> {
    const replica = await this.current();
    if (!replica) return read(this.primary);
    try {
      return await read(replica);
    } catch (error) {
      if (error instanceof NotFoundException) return read(this.primary);
      if (!isReplicaFailure(error)) throw error;
      this.skipNow('down', `failed a read: ${(error as Error).message}`);
      this.metrics.replicaSkipped('down');
      return read(this.primary);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.replica?.isInitialized) await this.replica.destroy();
  }

  /** The replica when its last check found it usable, checked again first when that is too old. */
  private async current(): Promise<DataSource | null> {
    if (!this.replica) return null;
    if (Date.now() - this.checkedAt >= REPLICA_CHECK_INTERVAL_MS) {
      // Concurrent reads share one check.
      this.checking ??= this.check(this.replica).finally(() => (this.checking = null));
      await this.checking;
    }
    if (this.skip === null) return this.replica;
    this.metrics.replicaSkipped(this.skip);
    return null;
  }

  private async check(replica: DataSource): Promise<void> {
    try {
      const db = await withTimeout(this.connected(replica), CHECK_TIMEOUT_MS, `no connection within ${CHECK_TIMEOUT_MS} ms`);
      const [{ lag_ms: lag }] = await withTimeout<{ lag_ms: number }[]>(
        db.query(LAG_SQL),
        CHECK_TIMEOUT_MS,
        `no answer within ${CHECK_TIMEOUT_MS} ms`,
      );
      if (lag > this.config.databaseReadMaxLagMs) {
        this.skipNow('lag', `is ${lag === Infinity ? 'an unknown time' : `${Math.round(lag)} ms`} behind`);
      } else {
        if (this.skip !== null) this.logger.log('read replica is current again: statements and lists read from it');
        this.skip = null;
      }
    } catch (error) {
      this.skipNow('down', `does not answer: ${(error as Error).message}`);
    }
    this.checkedAt = Date.now();
  }

  /** Initializes the replica's pool once; a failed attempt is tried again at the next check. */
  private connected(replica: DataSource): Promise<DataSource> {
    this.initializing ??= replica.initialize().catch((error) => {
      this.initializing = null;
      throw error;
    });
    return this.initializing;
  }

  private skipNow(reason: SkipReason, detail: string): void {
    const changed = this.skip !== reason;
    this.skip = reason;
    if (!changed && Date.now() - this.loggedAt < LOG_EVERY_MS) return;
    this.loggedAt = Date.now();
    const limit = reason === 'lag' ? ` (DATABASE_READ_MAX_LAG_MS=${this.config.databaseReadMaxLagMs})` : '';
    this.logger.warn(`read replica ${detail}${limit}: statements and lists read from the primary`);
  }
}

/**
 * True when an error is the replica's rather than the read's: it is unreachable, went away, or cancelled the
 * query (conflicts with recovery are 40001/40P01; resources 53, system 58, internal XX); also any error without a
 * SQLSTATE. An HTTP answer or another SQLSTATE (bad data, a missing relation) would be the same on the primary.
 */
function isReplicaFailure(error: unknown): boolean {
  if (error instanceof HttpException) return false;
  const state = sqlState(error);
  return state === undefined || isDatabaseUnavailable(error) || /^(40|53|58|XX)/.test(state);
}
