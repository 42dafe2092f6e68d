import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { JobsOptions, Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../../infra/config/app-config';
import { CALLBACKS_QUEUE } from '../../infra/queue/queues';
import { Relaying, RelayLoop } from '../../infra/queue/relay-loop';
import { groupBy, groupsOfOneKey } from '../../common/grouping';
import { withTimeout } from '../../common/with-timeout';
import { DELIVERY_STATUS } from './callback-deliverer.service';
import { CALLBACKS_CHANNEL } from './callbacks.service';

/** Deliveries one round hands over at most; a full round is followed by another at once. */
const ROUND = 1000;
/** Deliveries of one client one job carries at most: its reads and records are a statement each. */
export const DELIVERY_GROUP = 50;
/** Written out in the statements, so that the partial indexes on PENDING serve. */
const PENDING = DELIVERY_STATUS.PENDING;
const ENQUEUE_TIMEOUT_MS = 3000;
/** One lock key for every callback relay, so two never hand over the same rows at once. */
const RELAY_LOCK_KEY = 4_201_033;

/** One attempt a job is to make: the delivery's scheduled attempts (until DELIVERED or FAILED), or one replay asked for. */
export interface DeliveryItem {
  deliveryId: string;
  /** A re-send the merchant asked for, outside the retry schedule. */
  replay: boolean;
}

/**
 * A delivery job: deliveries of one client handed over together, and when (the `relayed_at` they got, as Postgres
 * prints it). The handler reads the rows, the truth, when it runs, and acts only on those still handed over to it: a
 * delivery handed over again since (lost, or a replay asked for) belongs to the later job.
 */
export interface DeliveryGroup {
  clientId: string;
  handedOverAt: string;
  items: DeliveryItem[];
}

interface ToRelay {
  id: string;
  client_id: string;
  pending: boolean;
  replay: boolean;
  next_attempt_at: Date;
}

/** Finished jobs go: their outcome is in the delivery rows. */
const JOB_OPTIONS: JobsOptions = { removeOnComplete: true, removeOnFail: true };

/**
 * Hands callback deliveries to BullMQ (CallbackDeliverer runs them) as jobs of up to DELIVERY_GROUP deliveries of one
 * client: the rows not yet handed over (`relayed_at` null) that are PENDING (delayed to their next attempt) or have a
 * replay asked for. It runs when woken: by the NOTIFY of callback_schedule or of a replay request, and by a slow
 * safety sweep. The rows stay the truth: while Redis is away they wait, and a delivery handed over whose attempt is
 * overdue (Redis lost the job) is handed over again after OUTBOX_LOST_JOB_AFTER_MS. Each hand-over stamps the rows
 * with its own time, and a job acts only on rows bearing its stamp, so a job still alive after its rows were handed
 * over again sends nothing twice.
 */
@Injectable()
export class CallbackRelay implements Relaying, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly rounds: RelayLoop;
  private readonly lostJobAfterMs: number;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectQueue(CALLBACKS_QUEUE) private readonly queue: Queue<DeliveryGroup>,
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

  /**
   * Hands one round of deliveries to BullMQ; answers how many, and whether more are waiting. The rows are marked
   * handed over, with the round's stamp, and committed before their jobs are added: a job that runs at once finds them
   * stamped. When the jobs cannot be added (Redis is away) the mark is taken back; a process that dies in between
   * leaves rows the lost-work sweep hands over again.
   */
  async relay(): Promise<{ relayed: number; more: boolean }> {
    const { at, rows } = await this.db.transaction(async (manager) => {
      // The round's stamp is its transaction's now(), which markRelayed writes.
      const [{ at }]: Array<{ at: string }> = await manager.query(`SELECT pg_advisory_xact_lock($1), now()::text AS at`, [RELAY_LOCK_KEY]);
      const read: ToRelay[] = await manager.query(
        `SELECT id, client_id, status = '${PENDING}' AS pending, replay_requested_at IS NOT NULL AS replay, next_attempt_at
           FROM callback_deliveries WHERE relayed_at IS NULL AND (status = '${PENDING}' OR replay_requested_at IS NOT NULL)
          ORDER BY next_attempt_at LIMIT $1`,
        [ROUND],
      );
      return { at, rows: await this.markRelayed(manager, read) };
    });
    if (rows.length === 0) return { relayed: 0, more: false };
    const now = Date.now();
    const jobs = groupsOfOneKey(rows, (row) => row.client_id, DELIVERY_GROUP).map((group) => {
      const items = group.flatMap((row) => [
        ...(row.pending ? [{ deliveryId: row.id, replay: false }] : []),
        ...(row.replay ? [{ deliveryId: row.id, replay: true }] : []),
      ]);
      // A replay is due now; scheduled attempts at the first one's time (the job waits again for any later one).
      const dueAt = group.some((row) => row.replay) ? now : Math.min(...group.map((row) => row.next_attempt_at.getTime()));
      const data: DeliveryGroup = { clientId: group[0].client_id, handedOverAt: at, items };
      const jobId = `deliveries_${data.clientId}_${group[0].id}_${at.replace(/\D/g, '')}`;
      return { name: 'deliver', data, opts: { ...JOB_OPTIONS, jobId, delay: Math.max(0, dueAt - now) } };
    });
    try {
      await withTimeout(this.queue.addBulk(jobs), ENQUEUE_TIMEOUT_MS, 'enqueueing to Redis timed out');
    } catch (error) {
      await this.unmark(rows, at).catch(() => undefined);
      throw error;
    }
    return { relayed: rows.length, more: rows.length === ROUND };
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
   * Marks the rows handed over, client by client, and answers those marked: a row whose replay was asked for since it
   * was read stays to be handed over by the next round.
   */
  private async markRelayed(manager: EntityManager, rows: ToRelay[]): Promise<ToRelay[]> {
    const marked: ToRelay[] = [];
    for (const [clientId, ofClient] of groupBy(rows, (row) => row.client_id)) {
      const [ids]: [Array<{ id: string }>, number] = await manager.query(
        `UPDATE callback_deliveries d SET relayed_at = now() FROM unnest($2::uuid[], $3::boolean[]) r(id, replay)
          WHERE d.client_id = $1 AND d.id = r.id AND (d.replay_requested_at IS NOT NULL) = r.replay RETURNING d.id`,
        [clientId, ofClient.map((row) => row.id), ofClient.map((row) => row.replay)],
      );
      const done = new Set(ids.map((row) => row.id));
      marked.push(...ofClient.filter((row) => done.has(row.id)));
    }
    return marked;
  }

  /** Takes back a round's mark (its jobs were not added), unless the rows were handed over again since. */
  private async unmark(rows: ToRelay[], at: string): Promise<void> {
    for (const [clientId, ofClient] of groupBy(rows, (row) => row.client_id)) {
      await this.db.query(
        `UPDATE callback_deliveries SET relayed_at = NULL WHERE client_id = $1 AND id = ANY($2::uuid[]) AND relayed_at = $3::timestamptz`,
        [clientId, ofClient.map((row) => row.id), at],
      );
    }
  }
}
