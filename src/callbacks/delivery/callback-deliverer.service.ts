import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DelayedError, Job, Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../../infra/config/app-config';
import { GroupCommit } from '../../infra/database/group-commit';
import { EngineMetrics } from '../../infra/metrics/engine-metrics';
import { OwnClientWorker } from '../../infra/queue/queue.module';
import { CALLBACKS_QUEUE } from '../../infra/queue/queues';
import { CallbackEndpoint, CallbackKind, CallbackSettingsService, DeliverySettings } from '../../clients/callback-settings.service';
import { resolveCallbackTarget } from '../../common/url-safety/callback-url';
import { CallbackResolver, PinnedConnections } from '../../common/url-safety/pinned-post';
import { signatureHeaders } from './signature';
import { RESPONSE_BODY_CHARS } from './callbacks.service';
import type { DeliveryGroup, DeliveryItem } from './callback-relay.service';
import { ConcurrencyLimit } from '../../common/concurrency-limit';

const TIMEOUT_MS = 10_000;
/** Deliveries a worker posts at once. */
const POSTS_AT_ONCE = 200;
/** Jobs (groups of deliveries) a worker runs at once: many, so that one slow receiver holds back few others. */
const JOBS_AT_ONCE = 50;
/** Records of one client's attempts go to Postgres together: at most this many per statement. */
const RECORDS_PER_STATEMENT = 100;
/** A scheduled attempt due within this much is made now (clocks of other processes); one due later waits again. */
const EARLY_MS = 50;
/** A job waiting for its next attempts waits for those due within this much of the first, so it wakes once for them. */
const GATHER_MS = 1000;
/** A job whose worker died is taken up again (stalled) this many times before the lost-delivery sweep takes over. */
const MAX_STALLED = 5;

/** callback_deliveries.status: PENDING until acknowledged (DELIVERED) or out of retries (FAILED). */
export const DELIVERY_STATUS = { PENDING: 'PENDING', DELIVERED: 'DELIVERED', FAILED: 'FAILED' } as const;
export type DeliveryStatus = (typeof DELIVERY_STATUS)[keyof typeof DELIVERY_STATUS];

/** A delivery as its job reads it when it runs. */
interface Delivery {
  id: string;
  client_id: string;
  kind: CallbackKind;
  event: string;
  url: string;
  payload: Record<string, unknown>;
  status: DeliveryStatus;
  attempts: number;
  replays: number;
  /** When the first attempt was made (null before it): the retry schedule counts from it. */
  first_attempt_at: Date | null;
  next_attempt_at: Date;
  replay_requested: boolean;
}

interface Loaded {
  /** The job's deliveries still handed over to it, by id. */
  deliveries: Map<string, Delivery>;
  settings: DeliverySettings | undefined;
}

interface Post {
  startedAt: Date;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  body: string;
}

interface Attempt {
  delivery: Delivery;
  replay: boolean;
  post: Post;
  delivered: boolean;
  status: DeliveryStatus;
  nextAt: Date | null;
}

/**
 * The status an attempt leaves: acknowledged, DELIVERED; a replay not acknowledged, or an attempt on a delivery that
 * another attempt finished meanwhile, leaves the status as it is; otherwise the schedule's (PENDING or FAILED).
 */
const RECORDED_STATUS = `CASE WHEN a.delivered THEN '${DELIVERY_STATUS.DELIVERED}' WHEN a.replay OR d.status <> '${DELIVERY_STATUS.PENDING}' THEN d.status ELSE a.status END`;

/**
 * Runs the callback deliveries' BullMQ jobs (CallbackRelay hands them over), each a group of one client's deliveries,
 * delayed between attempts on the retry schedule (CALLBACK_RETRY_DELAYS_MS) with the deliveries still to retry. A job
 * reads its deliveries in one statement when it runs and acts on those that still apply; the records of one client's
 * attempts that finish together share a statement. The rows are written before the job moves on, so they stay the
 * truth. A worker killed mid-post leaves jobs whose lock (CALLBACK_LEASE_MS) runs out; BullMQ takes them up again on
 * another worker (same event ids): at-least-once, as merchants deduplicate by X-Event-Id.
 */
@Injectable()
export class CallbackDeliverer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CallbackDeliverer.name);
  private readonly connections = new PinnedConnections();
  private readonly posts = new ConcurrencyLimit(POSTS_AT_ONCE);
  private readonly records: GroupCommit<Attempt, boolean>;
  private worker: OwnClientWorker | null = null;
  private lastErrorLog = 0;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly settings: CallbackSettingsService,
    private readonly resolver: CallbackResolver,
    private readonly metrics: EngineMetrics,
    @InjectQueue(CALLBACKS_QUEUE) private readonly queue: Queue<DeliveryGroup>,
  ) {
    this.records = new GroupCommit((attempts) => this.record(attempts), {
      maxItems: RECORDS_PER_STATEMENT,
      maxInFlight: 2,
      laneOf: (attempt) => attempt.delivery.client_id,
    });
  }

  onApplicationBootstrap(): void {
    const lease = this.config.callbackLeaseMs;
    this.worker = new OwnClientWorker(CALLBACKS_QUEUE, (job: Job<DeliveryGroup>, token?: string) => this.run(job, token), {
      connection: this.queue.opts.connection,
      prefix: this.queue.opts.prefix,
      concurrency: JOBS_AT_ONCE,
      lockDuration: lease,
      stalledInterval: Math.floor(lease / 2),
      maxStalledCount: MAX_STALLED,
    });
    this.worker.on('error', (error) => this.warnThrottled(`callback worker: ${error.message}`));
    this.worker.on('failed', (job, error) => {
      this.metrics.jobFailed(CALLBACKS_QUEUE);
      this.warnThrottled(`callback job ${job?.id} failed (attempt ${job?.attemptsMade}): ${error.message}`);
    });
  }

  /** Stops taking jobs, lets the posts under way finish and be recorded, then closes the connections. */
  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
    this.connections.close();
  }

  /**
   * One attempt of each of the job's deliveries that still applies: a replay still asked for, or a scheduled attempt
   * of a delivery still PENDING and due. Scheduled attempts not yet due, and those not acknowledged with another to
   * come, stay in the job, which waits, delayed, for them. An attempt not recorded stays too, and the job fails:
   * BullMQ runs it again after its back-off, which sends that attempt again.
   */
  private async run(job: Job<DeliveryGroup>, token?: string): Promise<void> {
    const { clientId, handedOverAt, items } = job.data;
    const { deliveries, settings } = await this.load(clientId, handedOverAt, items);
    const now = Date.now();
    const due: Array<{ item: DeliveryItem; delivery: Delivery }> = [];
    const later: Array<{ item: DeliveryItem; at: number }> = [];
    for (const item of items) {
      const delivery = deliveries.get(item.deliveryId);
      if (!delivery || (item.replay ? !delivery.replay_requested : delivery.status !== DELIVERY_STATUS.PENDING)) continue;
      const at = new Date(delivery.next_attempt_at).getTime();
      if (!item.replay && at > now + EARLY_MS) later.push({ item, at });
      else due.push({ item, delivery });
    }
    const attempts = await Promise.all(due.map(({ item, delivery }) => this.attempt(delivery, settings, item.replay)));
    const unrecorded = due.filter((_, i) => !attempts[i].recorded).map(({ item }) => item);
    due.forEach(({ item }, i) => attempts[i].nextAt && later.push({ item, at: attempts[i].nextAt!.getTime() }));
    if (unrecorded.length === 0 && later.length === 0) return;
    const remaining = [...unrecorded, ...later.map(({ item }) => item)];
    if (remaining.length < items.length) await job.updateData({ clientId, handedOverAt, items: remaining });
    if (unrecorded.length > 0) throw new Error(`callbacks ${unrecorded.map((item) => item.deliveryId).join(', ')}: attempts not recorded`);
    const first = Math.min(...later.map(({ at }) => at));
    await job.moveToDelayed(Math.max(...later.map(({ at }) => at).filter((at) => at <= first + GATHER_MS)), token);
    throw new DelayedError();
  }

  /** One attempt of a delivery, posted and recorded; answers whether it was recorded, and when the next one is due. */
  private async attempt(
    delivery: Delivery,
    settings: DeliverySettings | undefined,
    replay: boolean,
  ): Promise<{ recorded: boolean; nextAt: Date | null }> {
    const post = await this.posts.run(() => this.post(delivery, settings));
    const delivered = post.httpStatus !== null && post.httpStatus >= 200 && post.httpStatus < 300;
    const outcome = replay ? replayOutcome(delivery, delivered) : this.scheduledOutcome(delivery, post, delivered);
    const attempt: Attempt = { delivery, replay, post, delivered, ...outcome };
    if (!(await this.records.submit(attempt))) return { recorded: false, nextAt: null };
    this.report(attempt);
    return { recorded: true, nextAt: outcome.nextAt };
  }

  /** The job's deliveries still handed over to it (stamped with its hand-over), with their client's delivery settings. */
  private async load(clientId: string, handedOverAt: string, items: DeliveryItem[]): Promise<Loaded> {
    const [rows, settings] = await Promise.all([
      this.db.query(
        `SELECT id, client_id, kind, event, url, payload, status, attempts, replays, first_attempt_at, next_attempt_at,
                replay_requested_at IS NOT NULL AS replay_requested
           FROM callback_deliveries WHERE client_id = $1 AND id = ANY($2::uuid[]) AND relayed_at = $3::timestamptz`,
        [clientId, [...new Set(items.map((item) => item.deliveryId))], handedOverAt],
      ) as Promise<Delivery[]>,
      this.settings.deliverySettingsOf([clientId]),
    ]);
    return { deliveries: new Map(rows.map((row) => [row.id, row])), settings: settings.get(clientId) };
  }

  /**
   * Writes one client's attempts and their deliveries' outcomes in one statement; answers, per attempt, whether it
   * was recorded. The attempt's number is the delivery's count at the write, so attempts that ran side by side (a
   * replay and a scheduled one) are numbered in the order they were written. When the statement fails, or names a
   * delivery twice, each attempt is written alone, so one bad row holds back no other.
   */
  private async record(attempts: Attempt[]): Promise<boolean[]> {
    const ids = attempts.map((a) => a.delivery.id);
    if (attempts.length > 1 && new Set(ids).size < ids.length) return this.recordEachAlone(attempts);
    try {
      const rows: Array<{ delivery_id: string }> = await this.db.query(
        `WITH attempt AS (
           SELECT * FROM unnest($2::uuid[], $3::varchar[], $4::timestamptz[], $5::jsonb[], $6::boolean[], $7::boolean[],
                                $8::timestamptz[], $9::smallint[], $10::integer[], $11::varchar[], $12::varchar[])
             AS a(delivery_id, status, next_at, acknowledgement, replay, delivered, attempted_at, http_status, latency_ms, error,
                  response_body)
         ), recorded AS (
           UPDATE callback_deliveries d SET attempts = d.attempts + 1, replays = d.replays + a.replay::int, status = ${RECORDED_STATUS},
             first_attempt_at = coalesce(d.first_attempt_at, a.attempted_at),
             replay_requested_at = CASE WHEN a.replay THEN NULL ELSE d.replay_requested_at END,
             next_attempt_at = coalesce(a.next_at, d.next_attempt_at), acknowledgement = coalesce(a.acknowledgement, d.acknowledgement),
             -- The clock outside CASE and COALESCE (Citus refuses it inside them in an UPDATE).
             completed_at = CASE WHEN ${RECORDED_STATUS} = '${DELIVERY_STATUS.PENDING}' THEN NULL
                                 WHEN d.status = ${RECORDED_STATUS} THEN least(d.completed_at, clock.at) ELSE clock.at END
           FROM attempt a, (SELECT now() AS at) clock WHERE d.client_id = $1 AND d.id = a.delivery_id
           RETURNING d.id, d.attempts
         )
         INSERT INTO callback_attempts (client_id, delivery_id, attempt, attempted_at, http_status, latency_ms, error, replay, response_body)
         SELECT $1, a.delivery_id, r.attempts, a.attempted_at, a.http_status, a.latency_ms, a.error, a.replay, a.response_body
         FROM attempt a JOIN recorded r ON r.id = a.delivery_id
         RETURNING delivery_id`,
        [
          attempts[0].delivery.client_id,
          ids,
          attempts.map((a) => a.status),
          attempts.map((a) => a.nextAt),
          attempts.map((a) => (a.delivered ? acknowledgement(a.post.body) : null)),
          attempts.map((a) => a.replay),
          attempts.map((a) => a.delivered),
          attempts.map((a) => a.post.startedAt),
          attempts.map((a) => a.post.httpStatus),
          attempts.map((a) => a.post.latencyMs),
          attempts.map((a) => a.post.error?.slice(0, 255) ?? null),
          attempts.map((a) => responseBody(a.post)),
        ],
      );
      const recorded = new Set(rows.map((r) => r.delivery_id));
      return ids.map((id) => recorded.has(id));
    } catch (error) {
      if (attempts.length > 1) return this.recordEachAlone(attempts);
      this.warnThrottled(`callback ${attempts[0].delivery.id}: attempt not recorded (${(error as Error).message}); sent again`);
      return [false];
    }
  }

  private async recordEachAlone(attempts: Attempt[]): Promise<boolean[]> {
    const recorded: boolean[] = [];
    for (const attempt of attempts) recorded.push(...(await this.record([attempt])));
    return recorded;
  }

  private report({ delivery, post, delivered, nextAt }: Attempt): void {
    this.metrics.callbackOutcome(delivered ? 'delivered' : nextAt ? 'retry_scheduled' : 'failed');
    if (!delivered)
      this.logger.warn(`callback ${delivery.id} attempt ${delivery.attempts + 1} not acknowledged: ${post.error ?? post.httpStatus}`);
  }

  /** The retry schedule counts its own attempts only (replays are extra), from when the first attempt was made. */
  private scheduledOutcome(delivery: Delivery, post: Post, delivered: boolean): { status: DeliveryStatus; nextAt: Date | null } {
    if (delivered) return { status: DELIVERY_STATUS.DELIVERED, nextAt: null };
    const delays = this.config.callbackRetryDelaysMs;
    const scheduled = delivery.attempts - delivery.replays + 1;
    if (scheduled > delays.length) return { status: DELIVERY_STATUS.FAILED, nextAt: null };
    const firstAttemptAt = delivery.first_attempt_at ?? post.startedAt;
    return { status: DELIVERY_STATUS.PENDING, nextAt: new Date(new Date(firstAttemptAt).getTime() + delays[scheduled - 1]) };
  }

  private async post(delivery: Delivery, settings: DeliverySettings | undefined): Promise<Post> {
    const startedAt = new Date();
    const started = performance.now();
    const failed = (error: string): Post => ({
      startedAt,
      httpStatus: null,
      latencyMs: Math.round(performance.now() - started),
      error,
      body: '',
    });
    try {
      const resolved = await resolveCallbackTarget(delivery.url, this.config.isSandbox, this.resolver.lookup);
      if ('problem' in resolved) return failed(`callback URL ${resolved.problem}`);
      if (!settings) return failed(`client ${delivery.client_id} has no signing secret`);
      const body = JSON.stringify(delivery.payload);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'paygate-callbacks/1',
        'x-event-id': delivery.id,
        'x-event-type': delivery.event,
        ...signatureHeaders(settings.signingSecrets, delivery.id, body, Math.floor(Date.now() / 1000)),
      };
      const credentials = credentialsFor(delivery.url, settings.endpoints[delivery.kind]);
      if (credentials) headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
      // Well inside the job's lock, so no other worker takes the job over while this post may still land.
      const timeoutMs = Math.min(TIMEOUT_MS, this.config.callbackLeaseMs / 2);
      const response = await this.connections.post(resolved.target, headers, body, timeoutMs);
      const ok = response.status >= 200 && response.status < 300;
      return {
        startedAt,
        httpStatus: response.status,
        latencyMs: Math.round(performance.now() - started),
        error: ok ? null : `HTTP ${response.status}`,
        body: response.body,
      };
    } catch (error) {
      return failed((error as Error).message);
    }
  }

  private warnThrottled(message: string): void {
    if (Date.now() - this.lastErrorLog < 30_000) return;
    this.lastErrorLog = Date.now();
    this.logger.warn(message);
  }
}

/**
 * A replay is one attempt outside the schedule: acknowledged, the delivery is delivered (a pending one's scheduled
 * attempt then finds nothing to do); not acknowledged, the delivery keeps its status and its schedule.
 */
function replayOutcome(delivery: Delivery, delivered: boolean): { status: DeliveryStatus; nextAt: null } {
  return { status: delivered ? DELIVERY_STATUS.DELIVERED : delivery.status, nextAt: null };
}

/**
 * The Basic-auth credentials of the kind's registered endpoint go only to that endpoint's origin: a per-request
 * callback_url on another host (or scheme, or port) never receives the merchant's password.
 */
function credentialsFor(url: string, endpoint: CallbackEndpoint | undefined): string | null {
  if (!endpoint || endpoint.username === null || endpoint.password === null) return null;
  return new URL(url).origin === new URL(endpoint.url).origin ? `${endpoint.username}:${endpoint.password}` : null;
}

/** What the delivery's page shows of the receiver's answer: the start of its body (text refuses NUL). */
function responseBody(post: Post): string | null {
  if (post.httpStatus === null) return null;
  return post.body.slice(0, RESPONSE_BODY_CHARS).replaceAll('\u0000', '');
}

/**
 * A charge callback's 2xx body may carry acknowledgement fields (collection document §2); kept when it is a JSON
 * object that jsonb accepts (it refuses \u0000).
 */
function acknowledgement(body: string): string | null {
  if (body.includes('\\u0000')) return null;
  try {
    const parsed = JSON.parse(body);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? body : null;
  } catch {
    return null;
  }
}
