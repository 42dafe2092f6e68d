import { Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { EngineMetrics } from '../infra/metrics/engine-metrics';
import { OutboxJobProcessor } from '../infra/queue/outbox-job.processor';
import { OutboxService } from '../infra/queue/outbox.service';
import { QUEUES, TOPICS } from '../infra/queue/queues';
import { CallbackEndpoint, CallbackKind, CallbackSettingsService } from './callback-settings.service';
import { resolveCallbackTarget } from './callback-url';
import { CallbackResolver, pinnedPost } from './pinned-post';
import { signatureHeader } from './signature';

const TIMEOUT_MS = 10_000;

type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

interface DeliveryRow {
  id: string;
  client_id: string;
  kind: CallbackKind;
  event: string;
  url: string;
  payload: Record<string, unknown>;
  status: DeliveryStatus;
  attempts: number;
  replays: number;
  first_attempt_at: Date | null;
}

/**
 * Delivers one callback attempt. The delivery row is leased first, so two workers never post the same attempt;
 * the outcome and the next attempt (from the outbox, so a lost Redis loses no retry) are written together. A job
 * that finds the lease held by another worker (which may have died mid-post) does not just end: it books itself
 * again for when the lease runs out, so the delivery is never left PENDING without a job.
 */
@Processor(QUEUES.callbacks, { concurrency: 50 })
export class CallbackDeliveryProcessor extends OutboxJobProcessor<{
  deliveryId: string;
  outboxId?: string;
}> {
  constructor(
    @InjectDataSource() db: DataSource,
    metrics: EngineMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly settings: CallbackSettingsService,
    private readonly outbox: OutboxService,
    private readonly resolver: CallbackResolver,
  ) {
    super(QUEUES.callbacks, db, metrics);
  }

  async process(job: Job<{ deliveryId: string; replay?: string }>): Promise<void> {
    const replay = job.data.replay === 'true';
    // A scheduled attempt needs a pending delivery that is due; a replay (CallbacksService.replay) one whose replay
    // is still requested (until its attempt is recorded), whatever its status. The lease keeps a second worker off it.
    const [lease]: DeliveryRow[][] = await this.db.query(
      `UPDATE callback_deliveries SET lease_until = now() + make_interval(secs => $3),
         first_attempt_at = coalesce(first_attempt_at, now())
       WHERE id = $1 AND (lease_until IS NULL OR lease_until < now())
         AND CASE WHEN $2 THEN replay_requested_at IS NOT NULL
                  ELSE status = 'PENDING' AND next_attempt_at <= now() + interval '1 second' END
       RETURNING id, client_id, kind, event, url, payload, status, attempts, replays, first_attempt_at`,
      [job.data.deliveryId, replay, this.config.callbackLeaseMs / 1000],
    );
    const delivery = lease[0];
    if (!delivery) {
      // A replay that finds the delivery being sent by a scheduled attempt waits for it (the job is retried).
      if (replay && (await this.replayStillRequested(job.data.deliveryId)))
        throw new Error(`callback ${job.data.deliveryId} is being sent; replay retried`);
      return replay ? undefined : this.retryWhenLeaseExpires(job.data.deliveryId); // replayed already, or see there
    }
    const attempt = delivery.attempts + 1;
    const result = await this.post(delivery);
    const delivered = result.httpStatus !== null && result.httpStatus >= 200 && result.httpStatus < 300;
    const outcome = replay ? replayOutcome(delivery, delivered) : this.scheduledOutcome(delivery, delivered);

    await this.db.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO callback_attempts (delivery_id, attempt, attempted_at, http_status, latency_ms, error, replay) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [delivery.id, attempt, result.startedAt, result.httpStatus, result.latencyMs, result.error?.slice(0, 255) ?? null, replay],
      );
      await manager.query(
        `UPDATE callback_deliveries SET attempts = $2, replays = replays + $6, status = $3::varchar, lease_until = NULL,
           replay_requested_at = CASE WHEN $6 = 1 THEN NULL ELSE replay_requested_at END,
           next_attempt_at = coalesce($4, next_attempt_at), acknowledgement = coalesce($5, acknowledgement),
           completed_at = CASE WHEN $3::varchar = 'PENDING' THEN NULL WHEN status = $3::varchar THEN coalesce(completed_at, now()) ELSE now() END
         WHERE id = $1`,
        [delivery.id, attempt, outcome.status, outcome.nextAt, delivered ? acknowledgement(result.body) : null, replay ? 1 : 0],
      );
      if (outcome.nextAt) await this.outbox.enqueue(manager, TOPICS.deliverCallback, { deliveryId: delivery.id }, outcome.nextAt);
    });
    this.metrics.callbackOutcome(delivered ? 'delivered' : outcome.nextAt ? 'retry_scheduled' : 'failed');
    if (!delivered) this.logger.warn(`callback ${delivery.id} attempt ${attempt} not acknowledged: ${result.error ?? result.httpStatus}`);
  }

  private async replayStillRequested(deliveryId: string): Promise<boolean> {
    const [row] = await this.db.query(`SELECT 1 FROM callback_deliveries WHERE id = $1 AND replay_requested_at IS NOT NULL`, [deliveryId]);
    return Boolean(row);
  }

  /** The retry schedule counts its own attempts only (replays are extra), from the first attempt. */
  private scheduledOutcome(delivery: DeliveryRow, delivered: boolean): { status: DeliveryStatus; nextAt: Date | null } {
    if (delivered) return { status: 'DELIVERED', nextAt: null };
    const delays = this.config.callbackRetryDelaysMs;
    const scheduled = delivery.attempts - delivery.replays + 1;
    if (scheduled > delays.length) return { status: 'FAILED', nextAt: null };
    return {
      status: 'PENDING',
      nextAt: new Date(new Date(delivery.first_attempt_at!).getTime() + delays[scheduled - 1]),
    };
  }

  /**
   * Delivered, failed, or not due yet: another job exists for its next attempt, nothing to do. Held by another
   * worker: this job books itself again for just after the lease ends (if that worker finishes first, the booked
   * job finds the delivery done).
   */
  private async retryWhenLeaseExpires(deliveryId: string): Promise<void> {
    await this.db.transaction(async (manager) => {
      const [held]: Array<{ lease_until: Date }> = await manager.query(
        `SELECT lease_until FROM callback_deliveries
         WHERE id = $1 AND status = 'PENDING' AND next_attempt_at <= now() + interval '1 second' AND lease_until >= now()`,
        [deliveryId],
      );
      if (held)
        await this.outbox.enqueue(manager, TOPICS.deliverCallback, { deliveryId }, new Date(new Date(held.lease_until).getTime() + 100));
    });
  }

  private async post(delivery: DeliveryRow) {
    const startedAt = new Date();
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const resolved = await resolveCallbackTarget(delivery.url, this.config.isSandbox, this.resolver.lookup);
      if ('problem' in resolved) {
        return {
          startedAt,
          httpStatus: null,
          latencyMs: latency(),
          error: `callback URL ${resolved.problem}`,
          body: '',
        };
      }
      const signingSecrets = await this.settings.signingSecretsOf(this.db.manager, delivery.client_id);
      const endpoint = await this.settings.endpointFor(this.db.manager, delivery.client_id, delivery.kind);
      const body = JSON.stringify(delivery.payload);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'paygate-callbacks/1',
        'x-event-id': delivery.id,
        'x-event-type': delivery.event,
        'x-signature': signatureHeader(signingSecrets, body, Math.floor(Date.now() / 1000)),
      };
      const credentials = credentialsFor(delivery.url, endpoint);
      if (credentials) headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
      // Well inside the lease, so no other worker can take the delivery over while this post may still land.
      const timeoutMs = Math.min(TIMEOUT_MS, this.config.callbackLeaseMs / 2);
      const response = await pinnedPost(resolved.target, headers, body, timeoutMs);
      const ok = response.status >= 200 && response.status < 300;
      return {
        startedAt,
        httpStatus: response.status,
        latencyMs: latency(),
        error: ok ? null : `HTTP ${response.status}`,
        body: response.body,
      };
    } catch (error) {
      return {
        startedAt,
        httpStatus: null,
        latencyMs: latency(),
        error: (error as Error).message,
        body: '',
      };
    }
  }
}

/**
 * A replay is one attempt outside the schedule: acknowledged, the delivery is delivered (a pending one's retries
 * then find nothing to do); not acknowledged, the delivery keeps its status and its schedule.
 */
function replayOutcome(delivery: DeliveryRow, delivered: boolean): { status: DeliveryStatus; nextAt: null } {
  return { status: delivered ? 'DELIVERED' : delivery.status, nextAt: null };
}

/**
 * The Basic-auth credentials of the kind's registered endpoint go only to that endpoint's origin: a per-request
 * callback_url on another host (or scheme, or port) never receives the merchant's password.
 */
function credentialsFor(url: string, endpoint: CallbackEndpoint | null): string | null {
  if (!endpoint || endpoint.username === null || endpoint.password === null) return null;
  return new URL(url).origin === new URL(endpoint.url).origin ? `${endpoint.username}:${endpoint.password}` : null;
}

/** A charge callback's 2xx body may carry acknowledgement fields (collection document §2); kept when it is JSON. */
function acknowledgement(body: string): Record<string, unknown> | null {
  try {
    const parsed = JSON.parse(body);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
