/** Backlog drains: waiting for callbacks while sampling how far the backlog has come, and at what cost. */
import { Redis } from 'ioredis';
import { log, sleep } from './environment';
import type { GatewayBench } from './gateway-bench';
import { sampleWaits } from './machine';
import { rateOf } from './statistics';

/** How long a drain waits for its callbacks (BENCH_DRAIN_TIMEOUT, seconds). */
export const DRAIN_TIMEOUT_S = Number(process.env.BENCH_DRAIN_TIMEOUT ?? 150);

/** What a drain's timeline samples every 2 s: counts from SQL (one row) and the depth of BullMQ queues. */
export interface DrainProgress {
  sql: string;
  queues: string[];
}

/**
 * Waits until `expected` more callbacks have reached the receiver, sampling how far the backlog has come. With
 * `count` 'references', a reference's callbacks after its first do not count (a local payout is called back at its
 * callback_url and at the client's payouts endpoint), nor do they in the rates.
 */
export async function watchDrain(
  bench: GatewayBench,
  name: string,
  expected: number,
  unit: string,
  progress: DrainProgress,
  count: 'callbacks' | 'references' = 'callbacks',
) {
  const { meter, receiver } = bench;
  const arrived = count === 'callbacks' ? receiver.times : receiver.firstTimes;
  const deliveredBefore = arrived.length;
  const callbacksBefore = receiver.count;
  log(`${name}: waiting for ${expected} callbacks`);
  const before = await meter.snapshot();
  const waits = sampleWaits(meter.db, meter.dbName);
  const t0 = performance.now();
  const timeline: Array<Record<string, number>> = [];
  let lastPrint = 0;
  while ((performance.now() - t0) / 1000 < DRAIN_TIMEOUT_S) {
    const delivered = arrived.length - deliveredBefore;
    if (performance.now() - lastPrint >= 2000 || delivered >= expected) {
      lastPrint = performance.now();
      const [s] = (await meter.db.query(progress.sql)).rows;
      const q = await queueDepths(bench.redis!, progress.queues);
      const point = { t: +((performance.now() - t0) / 1000).toFixed(1), delivered, ...s, ...q };
      timeline.push(point);
      log(`${name} ${JSON.stringify(point)}`);
    }
    if (delivered >= expected) break;
    await sleep(250);
  }
  const waitSummary = await waits.stop();
  const after = await meter.snapshot();
  const times = arrived.slice(deliveredBefore);
  const rates = rateOf(times);
  return {
    times,
    result: {
      scenario: name,
      expected,
      delivered: times.length,
      ...(count === 'references' ? { callbacks_received: receiver.count - callbacksBefore } : {}),
      drained: times.length >= expected,
      seconds: rates.seconds,
      deliveries_per_second: rates.average,
      deliveries_per_second_peak_1s: rates.peak,
      duplicates_at_receiver: receiver.duplicates,
      per_unit: meter.costs(before, after, times.length, unit),
      db_backends_by_wait: waitSummary,
      timeline,
    } as Record<string, unknown>,
  };
}

async function queueDepths(redis: Redis, queues: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const q of queues) {
    const [wait, active, delayed] = await Promise.all([
      redis.llen(`bull:${q}:wait`),
      redis.llen(`bull:${q}:active`),
      redis.zcard(`bull:${q}:delayed`),
    ]);
    out[`${q}_waiting`] = wait;
    out[`${q}_active`] = active;
    out[`${q}_delayed`] = delayed;
  }
  return out;
}
