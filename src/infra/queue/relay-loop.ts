import { Logger } from '@nestjs/common';
import { ChannelListener } from '../database/channel-listener';

/** What a relay does in its rounds: hands Postgres rows to BullMQ. */
export interface Relaying {
  /** Hands over again work handed over that never finished (Redis lost it); answers how much. */
  requeueLost(): Promise<number>;
  /**
   * Hands over one round; `more` when work was left due (the next round runs at once). `nextDue`, for a relay that
   * hands work over only once it is due: when the first work not due at the round's read falls due (null when none
   * waits). It is read in the round's own transaction, against the same now(): read after it, work falling due while
   * the round ran would be neither handed over nor waited for.
   */
  relay(): Promise<{ more: boolean; nextDue?: Date | null }>;
}

/**
 * The slow safety sweep: a round this often even if no notification came. A reconnected listener already pokes (what
 * was said while it was away is unknown), so this covers only what nothing else wakes; slow, so an idle relay costs
 * a read every half minute.
 */
const SWEEP_EVERY_MS = 30_000;
/**
 * On a Citus coordinator the writes' NOTIFYs fire on the worker nodes (the outbox has no trigger there, and
 * callback_schedule runs delegated), where no relay listens: the sweep is what wakes a relay, so it runs this often.
 */
export const CITUS_SWEEP_EVERY_MS = 1000;
const ERROR_BACKOFF_MS = 1000;
/**
 * Wake-ups a round apart at least this long: under steady traffic every write NOTIFYs, so without it a relay would run
 * round after round, each a transaction of a dozen reads, in every worker process, mostly finding a row or two. The
 * wake-ups within it are served by one round; work waits for it at most this long. A full round (`more`) goes on at once.
 * The gap is also what gathers a group: the longer it is, the more rows a job carries and the fewer group calls the
 * workers make. bench:mixed at 120/s spent 4.4 ms of worker and 6.9 ms of Postgres CPU per request at 100 ms, 2.6
 * and 5.1 ms at 400, its callbacks as prompt (docs/benchmarks.md); a hop waits at most 0.4 s, against the seconds a
 * callback or a payout's rail takes.
 */
export const ROUND_GAP_MS = 400;
/** How often lost work is looked for: every 30 s, or sooner when the threshold is short. */
const MAX_LOST_SWEEP_EVERY_MS = 30_000;

/**
 * A relay's rounds, woken rather than polling: a round runs when poked (a NOTIFY on the relay's channel, which it
 * LISTENs to on a connection of its own; the listener once LISTEN holds, at start and after a reconnect; or the
 * relay's own poke), when the next work falls due, and every SWEEP_EVERY_MS (CITUS_SWEEP_EVERY_MS on a Citus
 * coordinator, which hears no NOTIFY); lost work is looked for every quarter of the lost threshold (30 s at most). A
 * poke while a round runs makes the next round run as soon as ROUND_GAP_MS has passed since it started, so no wake-up
 * is lost between two waits, nor work written between a process's first round and its LISTEN.
 */
export class RelayLoop {
  private readonly logger: Logger;
  private readonly lostSweepEveryMs: number;
  private readonly listener: ChannelListener;
  private running = false;
  private stopped: Promise<void> = Promise.resolve();
  private woken = false;
  private wake: (() => void) | null = null;
  private lastErrorLog = 0;
  private sweepEveryMs = SWEEP_EVERY_MS;

  constructor(
    name: string,
    private readonly relaying: Relaying,
    notified: { databaseUrl: string; channel: string },
    lostJobAfterMs: number,
  ) {
    this.logger = new Logger(name);
    this.listener = new ChannelListener(notified.databaseUrl, notified.channel, {
      message: () => this.poke(),
      listening: ({ citus }) => {
        this.sweepEveryMs = citus ? CITUS_SWEEP_EVERY_MS : SWEEP_EVERY_MS;
        this.poke();
      },
      lost: () => undefined,
    });
    this.lostSweepEveryMs = Math.min(MAX_LOST_SWEEP_EVERY_MS, Math.max(250, Math.floor(lostJobAfterMs / 4)));
  }

  start(): void {
    this.running = true;
    this.listener.start();
    this.stopped = this.loop();
  }

  /** Stops after the round under way. */
  async stop(): Promise<void> {
    this.running = false;
    this.poke();
    await this.stopped;
    await this.listener.stop();
  }

  poke(): void {
    this.woken = true;
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async loop(): Promise<void> {
    let lastLostSweep = 0;
    let lastRound = 0;
    let more = false;
    while (this.running) {
      const sinceLast = Date.now() - lastRound;
      if (!more && sinceLast < ROUND_GAP_MS) await new Promise((resolve) => setTimeout(resolve, ROUND_GAP_MS - sinceLast));
      if (!this.running) break;
      lastRound = Date.now();
      more = false;
      this.woken = false;
      let waitMs = this.sweepEveryMs;
      try {
        if (Date.now() - lastLostSweep > this.lostSweepEveryMs) {
          lastLostSweep = Date.now();
          const requeued = await this.relaying.requeueLost();
          if (requeued > 0) this.logger.warn(`${requeued} handed over and never finished (Redis lost them?); handing them over again`);
        }
        const round = await this.relaying.relay();
        more = round.more;
        if (more) continue;
        const { nextDue } = round;
        // A millisecond past it: a timer may fire up to one early, and a round before the due time finds nothing.
        if (nextDue) waitMs = Math.max(0, Math.min(waitMs, nextDue.getTime() + 1 - Date.now()));
        waitMs = Math.min(waitMs, Math.max(0, lastLostSweep + this.lostSweepEveryMs - Date.now()));
      } catch (error) {
        if (Date.now() - this.lastErrorLog > 30_000) {
          this.logger.warn(`paused: ${(error as Error).message}; the work waits in Postgres`);
          this.lastErrorLog = Date.now();
        }
        waitMs = ERROR_BACKOFF_MS;
      }
      await this.sleep(waitMs);
    }
  }

  /** Waits `ms`, or less when poked (a poke while a round ran ends the wait at once). */
  private sleep(ms: number): Promise<void> {
    if (this.woken || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
