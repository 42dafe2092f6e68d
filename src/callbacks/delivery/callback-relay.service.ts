import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { JobsOptions, Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../../infra/config/app-config';
import { CALLBACKS_QUEUE } from '../../infra/queue/queues';
import { Relaying, RelayLoop } from '../../infra/queue/relay-loop';
import { withTimeout } from '../../common/with-timeout';
import { DELIVERY_STATUS } from './callback-deliverer.service';
import { CALLBACKS_CHANNEL } from './callbacks.service';

/** Deliveries one round hands over at most; a full round is followed by another at once. */
const ROUND = 1000;
/** Written out in the statements, so that the partial indexes on PENDING serve. */
const PENDING = DELIVERY_STATUS.PENDING;
const ENQUEUE_TIMEOUT_MS = 3000;
/** One lock key for every callback relay, so two never hand over the same rows at once. */
const RELAY_LOCK_KEY = 4_201_033;

/** A delivery job: the delivery to attempt; the handler reads the row, the truth, when it runs. */
export interface DeliveryJob {
  clientId: string;
  deliveryId: string;
  /** A re-send the merchant asked for, outside the retry schedule. */
  replay: boolean;
}

interface ToRelay {
  id: string;
  client_id: string;
  pending: boolean;
  replay: boolean;
  replays: number;
  next_attempt_at: Date;
}

/**
 * The job ids are the delivery's: one scheduled job per delivery, living (delayed between attempts) until it is
 * DELIVERED or FAILED, and one per replay asked for. Handing a delivery over again while its job lives adds nothing.
 */
export function deliveryJobId(deliveryId: string, replayOf?: number): string {
  return replayOf === undefined ? `delivery_${deliveryId}` : `replay_${deliveryId}_${replayOf}`;
}

/** Finished jobs go: their outcome is in the delivery row, and a job id must be free to hand a lost delivery over again. */
const JOB_OPTIONS: JobsOptions = { removeOnComplete: true, removeOnFail: true };

/**
 * Hands callback deliveries to BullMQ (CallbackDeliverer runs them): the rows not yet handed over (`relayed_at` null)
 * that are PENDING (a job delayed to the delivery's next attempt) or have a replay asked for. It runs when woken: by
 * the NOTIFY of callback_schedule or of a replay request, and by a slow safety sweep. The rows stay the truth: while
 * Redis is away they wait, and a delivery handed over whose attempt is overdue (Redis lost the job) is handed over
 * again after OUTBOX_LOST_JOB_AFTER_MS, under the same job id, so a job still alive is not doubled.
 */
@Injectable()
export class CallbackRelay implements Relaying, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly rounds: RelayLoop;
  private readonly lostJobAfterMs: number;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectQueue(CALLBACKS_QUEUE) private readonly queue: Queue<DeliveryJob>,
  ) {
    this.lostJobAfterMs = config.outboxLostJobAfterMs;
    this.rounds = new RelayLoop(
      CallbackRelay.name,
      this,
      { databaseUrl: config.databaseUrl, channel: CALLBACKS_CHANNEL },
      this.lostJobAfterMs,
    );
  }

  onApplicationBootstrap(): void {
    this.rounds.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.rounds.stop();
  }

  /** Hands one round of deliveries to BullMQ; answers how many, and whether more are waiting. */
  async relay(): Promise<{ relayed: number; more: boolean }> {
    return this.db.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock($1)`, [RELAY_LOCK_KEY]);
      const rows: ToRelay[] = await manager.query(
        `SELECT id, client_id, status = '${PENDING}' AS pending, replay_requested_at IS NOT NULL AS replay, replays, next_attempt_at
           FROM callback_deliveries WHERE relayed_at IS NULL AND (status = '${PENDING}' OR replay_requested_at IS NOT NULL)
          ORDER BY next_attempt_at LIMIT $1`,
        [ROUND],
      );
      if (rows.length === 0) return { relayed: 0, more: false };
      const now = Date.now();
      const jobs = rows.flatMap((row) => {
        const data = (replay: boolean): DeliveryJob => ({ clientId: row.client_id, deliveryId: row.id, replay });
        return [
          ...(row.pending
            ? [
                {
                  name: 'deliver',
                  data: data(false),
                  opts: { ...JOB_OPTIONS, jobId: deliveryJobId(row.id), delay: Math.max(0, row.next_attempt_at.getTime() - now) },
                },
              ]
            : []),
          ...(row.replay
            ? [{ name: 'replay', data: data(true), opts: { ...JOB_OPTIONS, jobId: deliveryJobId(row.id, row.replays) } }]
            : []),
        ];
      });
      await withTimeout(this.queue.addBulk(jobs), ENQUEUE_TIMEOUT_MS, 'enqueueing to Redis timed out');
      await this.markRelayed(manager, rows);
      return { relayed: rows.length, more: rows.length === ROUND };
    });
  }

  /**
   * Hands over again the deliveries whose attempt is overdue by OUTBOX_LOST_JOB_AFTER_MS since they were handed over
   * (Redis lost the job, or it failed for good): their job ids are unchanged, so a job still alive is not doubled.
   */
  async requeueLost(): Promise<number> {
    const lost: Array<{ client_id: string; ids: string[] }> = await this.db.query(
      `SELECT client_id, array_agg(id) AS ids FROM callback_deliveries
        WHERE relayed_at < now() - make_interval(secs => $1)
          AND (status = '${PENDING}' AND next_attempt_at < now() - make_interval(secs => $1) OR replay_requested_at < now() - make_interval(secs => $1))
        GROUP BY client_id`,
      [this.lostJobAfterMs / 1000],
    );
    let requeued = 0;
    for (const { client_id, ids } of lost) {
      const [, count] = await this.db.query(
        `UPDATE callback_deliveries SET relayed_at = NULL WHERE client_id = $1 AND id = ANY($2::uuid[]) AND relayed_at < now() - make_interval(secs => $3)`,
        [client_id, ids, this.lostJobAfterMs / 1000],
      );
      requeued += count;
    }
    return requeued;
  }

  /**
   * Marks the rows handed over, client by client; a row whose replay was asked for since it was read (its job not
   * added) stays to be handed over by the next round.
   */
  private async markRelayed(manager: EntityManager, rows: ToRelay[]): Promise<void> {
    const byClient = new Map<string, ToRelay[]>();
    for (const row of rows) byClient.set(row.client_id, [...(byClient.get(row.client_id) ?? []), row]);
    for (const [clientId, ofClient] of byClient) {
      await manager.query(
        `UPDATE callback_deliveries d SET relayed_at = now() FROM unnest($2::uuid[], $3::boolean[]) r(id, replay)
          WHERE d.client_id = $1 AND d.id = r.id AND (d.replay_requested_at IS NOT NULL) = r.replay`,
        [clientId, ofClient.map((row) => row.id), ofClient.map((row) => row.replay)],
      );
    }
  }
}
