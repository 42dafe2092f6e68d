import { getQueueToken } from '@nestjs/bullmq';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { groupBy, groupsOfOneKey } from '../../common/grouping';
import { withTimeout } from '../../common/with-timeout';
import { OutboxGroup, OutboxWorkers } from './outbox-workers';
import { LANES, QUEUES, Topic } from './queues';
import { Relaying, RelayLoop } from './relay-loop';

/** The channel the outbox write notifies at its commit (src/infra/queue/sql/outbox_notify.sql). */
export const OUTBOX_CHANNEL = 'outbox';
/** Jobs of a topic waiting in BullMQ beyond which the relay leaves its due rows in Postgres, to form larger groups. */
const MAX_WAITING_JOBS = 4;
/** Groups of a topic one round reads at most. */
const GROUPS_PER_ROUND = 8;
const ENQUEUE_TIMEOUT_MS = 3000;
/** One lock key for every relay, so two relays never read the same rows and hand BullMQ overlapping groups. */
export const RELAY_LOCK_KEY = 4_201_032;

interface DueRow {
  id: string;
  client_id: string;
  topic: Topic;
  payload: Record<string, string>;
  relay_count: number;
}

/**
 * Hands due outbox rows to BullMQ, one job per group of rows of one topic and one client (each lane's group size), with a
 * job id made of the group (topic, client, first row, count, relay count): a round repeated after a failure adds the
 * job BullMQ already has, not a second one. Rows are read across clients (a plain read) and marked relayed client by
 * client, once BullMQ took the jobs. It runs when woken: by the outbox write's NOTIFY, by a job finishing in this
 * process (a lane that was full has room), at the next delayed row's due time, and by a slow safety sweep. While Redis is
 * away the rows wait in Postgres; rows relayed and not done after OUTBOX_LOST_JOB_AFTER_MS (Redis lost the job) are
 * relayed again.
 */
@Injectable()
export class OutboxRelay implements Relaying, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly queues = new Map<Topic, Queue>();
  private readonly rounds: RelayLoop;
  /** A relayed row not done after this long is presumed lost with Redis and relayed again (OUTBOX_LOST_JOB_AFTER_MS). */
  private readonly lostJobAfterMs: number;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly moduleRef: ModuleRef,
    workers: OutboxWorkers,
  ) {
    this.lostJobAfterMs = config.outboxLostJobAfterMs;
    this.rounds = new RelayLoop(OutboxRelay.name, this, { databaseUrl: config.databaseUrl, channel: OUTBOX_CHANNEL }, this.lostJobAfterMs);
    workers.onLaneFreed(() => this.rounds.poke());
  }

  onApplicationBootstrap(): void {
    for (const topic of QUEUES) this.queues.set(topic, this.moduleRef.get<Queue>(getQueueToken(topic), { strict: false }));
    this.rounds.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.rounds.stop();
  }

  relay(): Promise<{ more: boolean; nextDue: Date | null }> {
    return this.relayDue();
  }

  /**
   * Relays one round of due rows: up to GROUPS_PER_ROUND groups of each topic whose lane is not full. Answers how
   * many rows it relayed, whether a topic may have more due than one round took (its full page went whole), and when the
   * first row not yet due falls due.
   */
  async relayDue(): Promise<{ relayed: number; more: boolean; nextDue: Date | null }> {
    return this.db.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock($1)`, [RELAY_LOCK_KEY]);
      // Topic by topic, each on its own index range: a backlog of one never hides another's due rows.
      const rows: DueRow[] = [];
      for (const topic of QUEUES) {
        rows.push(
          ...(await manager.query(
            `SELECT id, client_id, topic, payload, relay_count FROM outbox
              WHERE topic = $1 AND relayed_at IS NULL AND available_at <= now() ORDER BY available_at, id LIMIT $2`,
            [topic, LANES[topic].group * GROUPS_PER_ROUND],
          )),
        );
      }
      // In this transaction, so against the same now() as the reads above: a row due just after them is found here.
      const [{ at: nextDue }]: Array<{ at: Date | null }> = await manager.query(
        `SELECT min(available_at) AS at FROM outbox WHERE topic = ANY($1) AND relayed_at IS NULL AND available_at > now()`,
        [QUEUES],
      );
      if (rows.length === 0) return { relayed: 0, more: false, nextDue };
      const byTopic = groupBy(rows, (row) => row.topic);
      // Only a topic whose full page went whole to BullMQ may have more due at once. A full lane waits for a job to
      // finish (OutboxWorkers pokes this relay then), not for a round that would find it full again.
      let more = false;
      const relayed: DueRow[] = [];
      await withTimeout(
        Promise.all(
          [...byTopic].map(async ([topic, due]) => {
            const queue = this.queues.get(topic)!;
            const room = MAX_WAITING_JOBS - (await queue.count());
            const all = groupsOfOneKey(due, (row) => row.client_id, LANES[topic].group);
            const groups = all.slice(0, Math.max(0, room));
            if (groups.length === 0) return;
            if (groups.length === all.length && due.length === LANES[topic].group * GROUPS_PER_ROUND) more = true;
            await queue.addBulk(groups.map((group) => ({ name: topic, data: jobData(group), opts: { jobId: jobId(topic, group) } })));
            relayed.push(...groups.flat());
          }),
        ),
        ENQUEUE_TIMEOUT_MS,
        'enqueueing to Redis timed out',
      );
      await this.markRelayed(manager, relayed);
      return { relayed: relayed.length, more, nextDue };
    });
  }

  /** Puts back rows that were relayed but never finished, e.g. because Redis restarted without its data. */
  async requeueLost(): Promise<number> {
    const lost: Array<{ client_id: string; ids: string[] }> = await this.db.query(
      `SELECT client_id, array_agg(id) AS ids FROM outbox
        WHERE relayed_at IS NOT NULL AND done_at IS NULL AND relayed_at < now() - make_interval(secs => $1)
        GROUP BY client_id`,
      [this.lostJobAfterMs / 1000],
    );
    let requeued = 0;
    for (const { client_id, ids } of lost) {
      const [, count] = await this.db.query(
        `UPDATE outbox SET relayed_at = NULL, relay_count = relay_count + 1
          WHERE client_id = $1 AND id = ANY($2::bigint[]) AND done_at IS NULL AND relayed_at < now() - make_interval(secs => $3)`,
        [client_id, ids, this.lostJobAfterMs / 1000],
      );
      requeued += count;
    }
    return requeued;
  }

  private async markRelayed(manager: EntityManager, rows: DueRow[]): Promise<void> {
    for (const [clientId, ofClient] of groupBy(rows, (row) => row.client_id)) {
      await manager.query(`UPDATE outbox SET relayed_at = now() WHERE client_id = $1 AND id = ANY($2::bigint[])`, [
        clientId,
        ofClient.map((row) => row.id),
      ]);
    }
  }
}

function jobData(group: DueRow[]): OutboxGroup {
  return { clientId: group[0].client_id, items: group.map((row) => ({ outboxId: String(row.id), payload: row.payload })) };
}

/** BullMQ refuses ':' in a job id; a topic's '.' and a client id's '-' are kept. */
function jobId(topic: Topic, group: DueRow[]): string {
  return `${topic}_${group[0].client_id}_${group[0].id}_${group.length}_${group[0].relay_count}`;
}
