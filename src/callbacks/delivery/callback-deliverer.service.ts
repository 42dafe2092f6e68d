import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../../infra/config/app-config';
import { EngineMetrics } from '../../infra/metrics/engine-metrics';
import { CallbackEndpoint, CallbackKind, CallbackSettingsService, DeliverySettings } from '../../clients/callback-settings.service';
import { resolveCallbackTarget } from '../../common/url-safety/callback-url';
import { CallbackResolver, PinnedConnections } from '../../common/url-safety/pinned-post';
import { signatureHeaders } from './signature';
import { RESPONSE_BODY_CHARS } from './callbacks.service';

const TIMEOUT_MS = 10_000;
/** Deliveries one claim takes at most. */
const CLAIM_BATCH = 100;
/** Deliveries a worker holds (claimed, not yet recorded); it claims again once a whole batch fits. */
const MAX_IN_FLIGHT = 2 * CLAIM_BATCH;
/** How often a worker with nothing to send looks for due deliveries. */
const IDLE_POLL_MS = 50;
const ERROR_BACKOFF_MS = 1000;

/** callback_deliveries.status: PENDING until acknowledged (DELIVERED) or out of retries (FAILED). */
export const DELIVERY_STATUS = { PENDING: 'PENDING', DELIVERED: 'DELIVERED', FAILED: 'FAILED' } as const;
export type DeliveryStatus = (typeof DELIVERY_STATUS)[keyof typeof DELIVERY_STATUS];

/** A row of claim_callback_deliveries: the delivery as claimed. */
interface ClaimedDelivery {
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
  /** The lease this claim took, at full precision: the attempt is recorded only while the delivery still has it. */
  lease: string;
  /** A re-send the merchant asked for (CallbacksService.replay), outside the retry schedule. */
  replay: boolean;
}

interface Post {
  startedAt: Date;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  body: string;
}

interface Attempt {
  delivery: ClaimedDelivery;
  number: number;
  post: Post;
  delivered: boolean;
  status: DeliveryStatus;
  nextAt: Date | null;
}

/**
 * Claims due deliveries from Postgres, many per query, with FOR UPDATE SKIP LOCKED: pending ones whose attempt is
 * due and those whose replay was asked for, each leased (CALLBACK_LEASE_MS) so no other worker posts it meanwhile.
 * Posts them over kept-alive connections, and records the attempts, and each delivery's outcome and next attempt,
 * together in one statement for all the posts that finished meanwhile. The delivery row is its own outbox: a due
 * time or a replay request is the job, so no Redis is involved and none can be lost. A worker killed mid-post leaves
 * leases that simply run out; the deliveries are claimed again then (same event id).
 */
@Injectable()
export class CallbackDeliverer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CallbackDeliverer.name);
  private readonly connections = new PinnedConnections();
  private running = false;
  private stopped: Promise<void> = Promise.resolve();
  /** Claimed and not yet recorded. */
  private held = 0;
  private readonly finished: Attempt[] = [];
  private recording = false;
  private onRecorded: (() => void) | null = null;
  private lastErrorLog = 0;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly settings: CallbackSettingsService,
    private readonly resolver: CallbackResolver,
    private readonly metrics: EngineMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.running = true;
    this.stopped = this.loop();
  }

  /** Stops claiming, lets the posts under way finish and be recorded, then closes the connections. */
  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.onRecorded?.();
    await this.stopped;
    while (this.held > 0) await this.recorded();
    this.connections.close();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      if (this.held > MAX_IN_FLIGHT - CLAIM_BATCH) {
        await this.recorded();
        continue;
      }
      try {
        const claimed = await this.claim();
        if (claimed.length > 0) {
          const settings = await this.settings.deliverySettingsOf([...new Set(claimed.map((d) => d.client_id))]);
          for (const delivery of claimed) this.deliver(delivery, settings.get(delivery.client_id));
        }
        if (claimed.length < CLAIM_BATCH) await sleep(IDLE_POLL_MS);
      } catch (error) {
        // Claimed deliveries whose settings could not be read wait for their lease to end.
        this.warnThrottled(`callback delivery paused: ${(error as Error).message}`);
        await sleep(ERROR_BACKOFF_MS);
      }
    }
  }

  /**
   * Replays asked for, and pending deliveries due (oldest first), that no live lease holds, leased for
   * CALLBACK_LEASE_MS. A replay of a pending, due delivery is sent first; its scheduled attempt is claimed by a later
   * query, as it is still due. SQL: src/callbacks/delivery/sql/claim_callback_deliveries.sql.
   */
  private claim(): Promise<ClaimedDelivery[]> {
    return this.db.query(`SELECT * FROM claim_callback_deliveries(p_batch => $1, p_lease_seconds => $2)`, [
      CLAIM_BATCH,
      this.config.callbackLeaseMs / 1000,
    ]);
  }

  private deliver(delivery: ClaimedDelivery, settings: DeliverySettings | undefined): void {
    this.held++;
    void this.post(delivery, settings).then((post) => {
      const delivered = post.httpStatus !== null && post.httpStatus >= 200 && post.httpStatus < 300;
      const outcome = delivery.replay ? replayOutcome(delivery, delivered) : this.scheduledOutcome(delivery, post, delivered);
      this.finished.push({ delivery, number: delivery.attempts + 1, post, delivered, ...outcome });
      if (!this.recording) void this.recordFinished();
    });
  }

  /** Records what finished, in one statement per round: what finishes while one is written goes in the next. */
  private async recordFinished(): Promise<void> {
    this.recording = true;
    while (this.finished.length > 0) {
      const attempts = this.finished.splice(0);
      const recorded = await this.record(attempts);
      for (const attempt of attempts.filter((a) => recorded.has(a.delivery.id))) this.report(attempt);
      this.held -= attempts.length;
      this.onRecorded?.();
    }
    this.recording = false;
  }

  /**
   * Writes the attempts and their deliveries' outcomes; returns the ids recorded. A delivery whose lease ran out
   * meanwhile is left to whoever claimed it since. When the statement fails, each attempt is tried alone, so one
   * bad row holds back no other; one that still fails is left to its lease's end, and the delivery is sent again.
   */
  private async record(attempts: Attempt[]): Promise<Set<string>> {
    try {
      const rows: Array<{ delivery_id: string }> = await this.db.query(
        `WITH attempt AS (
           SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::smallint[], $4::varchar[], $5::timestamptz[], $6::jsonb[], $7::boolean[],
                                $8::timestamptz[], $9::smallint[], $10::integer[], $11::varchar[], $12::varchar[])
             AS a(delivery_id, lease, attempt, status, next_at, acknowledgement, replay, attempted_at, http_status, latency_ms, error,
                  response_body)
         ), recorded AS (
           UPDATE callback_deliveries d SET attempts = a.attempt, replays = d.replays + a.replay::int, status = a.status, lease_until = NULL,
             first_attempt_at = coalesce(d.first_attempt_at, a.attempted_at),
             replay_requested_at = CASE WHEN a.replay THEN NULL ELSE d.replay_requested_at END,
             next_attempt_at = coalesce(a.next_at, d.next_attempt_at), acknowledgement = coalesce(a.acknowledgement, d.acknowledgement),
             completed_at = CASE WHEN a.status = '${DELIVERY_STATUS.PENDING}' THEN NULL WHEN d.status = a.status THEN coalesce(d.completed_at, now()) ELSE now() END
           FROM attempt a WHERE d.id = a.delivery_id AND d.lease_until = a.lease
           RETURNING d.id, d.client_id
         )
         INSERT INTO callback_attempts (client_id, delivery_id, attempt, attempted_at, http_status, latency_ms, error, replay, response_body)
         SELECT r.client_id, a.delivery_id, a.attempt, a.attempted_at, a.http_status, a.latency_ms, a.error, a.replay, a.response_body
         FROM attempt a JOIN recorded r ON r.id = a.delivery_id
         RETURNING delivery_id`,
        [
          attempts.map((a) => a.delivery.id),
          attempts.map((a) => a.delivery.lease),
          attempts.map((a) => a.number),
          attempts.map((a) => a.status),
          attempts.map((a) => a.nextAt),
          attempts.map((a) => (a.delivered ? acknowledgement(a.post.body) : null)),
          attempts.map((a) => a.delivery.replay),
          attempts.map((a) => a.post.startedAt),
          attempts.map((a) => a.post.httpStatus),
          attempts.map((a) => a.post.latencyMs),
          attempts.map((a) => a.post.error?.slice(0, 255) ?? null),
          attempts.map((a) => responseBody(a.post)),
        ],
      );
      return new Set(rows.map((r) => r.delivery_id));
    } catch (error) {
      if (attempts.length > 1) {
        const alone = await Promise.all(attempts.map((a) => this.record([a])));
        return new Set(alone.flatMap((ids) => [...ids]));
      }
      this.warnThrottled(
        `callback ${attempts[0].delivery.id}: attempt not recorded (${(error as Error).message}); sent again when its lease ends`,
      );
      return new Set();
    }
  }

  private report({ delivery, number, post, delivered, nextAt }: Attempt): void {
    this.metrics.callbackOutcome(delivered ? 'delivered' : nextAt ? 'retry_scheduled' : 'failed');
    if (!delivered) this.logger.warn(`callback ${delivery.id} attempt ${number} not acknowledged: ${post.error ?? post.httpStatus}`);
  }

  /** Resolves when the next round of attempts has been recorded (or at shutdown). */
  private recorded(): Promise<void> {
    return new Promise((resolve) => {
      this.onRecorded = () => {
        this.onRecorded = null;
        resolve();
      };
    });
  }

  /** The retry schedule counts its own attempts only (replays are extra), from when the first attempt was made. */
  private scheduledOutcome(delivery: ClaimedDelivery, post: Post, delivered: boolean): { status: DeliveryStatus; nextAt: Date | null } {
    if (delivered) return { status: DELIVERY_STATUS.DELIVERED, nextAt: null };
    const delays = this.config.callbackRetryDelaysMs;
    const scheduled = delivery.attempts - delivery.replays + 1;
    if (scheduled > delays.length) return { status: DELIVERY_STATUS.FAILED, nextAt: null };
    const firstAttemptAt = delivery.first_attempt_at ?? post.startedAt;
    return { status: DELIVERY_STATUS.PENDING, nextAt: new Date(new Date(firstAttemptAt).getTime() + delays[scheduled - 1]) };
  }

  private async post(delivery: ClaimedDelivery, settings: DeliverySettings | undefined): Promise<Post> {
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
      // Well inside the lease, so no other worker can take the delivery over while this post may still land.
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
function replayOutcome(delivery: ClaimedDelivery, delivered: boolean): { status: DeliveryStatus; nextAt: null } {
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
