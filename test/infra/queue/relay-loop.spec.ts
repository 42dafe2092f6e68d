import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Relaying, RelayLoop, ROUND_GAP_MS } from '../../../src/infra/queue/relay-loop';
import { sleep, waitFor } from '../../support/gateway-fixtures';

/** The lost-work threshold of the loops here: their lost-work sweep (a quarter of it, 30 s at most) wakes none of them. */
const LOST_AFTER_MS = 600_000;
/** How soon a round must follow what wakes it; the loop's own sweep is 30 s away. */
const PROMPT_MS = 2000;

/**
 * A relay's loop on the run's Postgres, with a stand-in for the relay's rounds: a round follows at once whatever
 * should wake it (its channel's NOTIFY, its listener's first LISTEN, the due time a round answers), even when it comes
 * while a round runs, so nothing written waits for the slow safety sweep.
 */
describe('relay loop: woken, not swept', () => {
  let notifier: Client;
  let loop: RelayLoop | null = null;

  beforeAll(async () => {
    notifier = new Client({ connectionString: process.env.DATABASE_URL });
    await notifier.connect();
  });
  afterEach(async () => {
    await loop?.stop();
    loop = null;
  });
  afterAll(async () => notifier.end());

  /** Rounds that hand over the work written before each round's read; a round can be held between its read and its end. */
  class Rounds implements Relaying {
    written = 0;
    handedOver = 0;
    readonly rounds: Array<{ at: number; found: number }> = [];
    nextDue: Date | null = null;
    private hold: Promise<void> | null = null;
    private release: (() => void) | null = null;
    private held: (() => void) | null = null;

    /** The next round reads, then waits until the returned function is called; resolves once it has read. */
    holdNextRound(): { read: Promise<void>; release: () => void } {
      const read = new Promise<void>((resolve) => (this.held = resolve));
      this.hold = new Promise<void>((resolve) => (this.release = resolve));
      return { read, release: () => this.release?.() };
    }

    async requeueLost(): Promise<number> {
      return 0;
    }

    async relay(): Promise<{ more: boolean; nextDue: Date | null }> {
      const found = this.written - this.handedOver;
      this.rounds.push({ at: Date.now(), found });
      const hold = this.hold;
      this.hold = null;
      this.held?.();
      this.held = null;
      if (hold) await hold;
      this.handedOver += found;
      return { more: false, nextDue: this.nextDue };
    }
  }

  function start(rounds: Rounds): { channel: string } {
    const channel = `relay_loop_${randomBytes(4).toString('hex')}`;
    loop = new RelayLoop('RelayLoopTest', rounds, { databaseUrl: process.env.DATABASE_URL!, channel }, LOST_AFTER_MS);
    loop.start();
    return { channel };
  }

  /** True once a connection LISTENs on the channel (the listener's LISTEN is the last statement of its connection). */
  async function listening(channel: string): Promise<boolean> {
    const { rows } = await notifier.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1 AND state = 'idle'`, [
      `LISTEN "${channel}"`,
    ]);
    return rows[0].n === 1;
  }

  async function quietRounds(rounds: Rounds, channel: string): Promise<void> {
    await waitFor('the loop to listen', () => listening(channel), 10_000);
    await sleep(2 * ROUND_GAP_MS); // the round that LISTEN holding pokes, a gap after the first one
    const settled = rounds.rounds.length;
    await sleep(300);
    expect(rounds.rounds.length).toBe(settled); // idle: no round without a wake-up
  }

  it('work written after the first round read and before LISTEN held is handed over once LISTEN holds', async () => {
    const rounds = new Rounds();
    const first = rounds.holdNextRound();
    const { channel } = start(rounds);
    await first.read;
    // Written now, its NOTIFY (none here) would go unheard: only the listener's poke at LISTEN can wake the loop.
    rounds.written += 1;
    await waitFor('the loop to listen', () => listening(channel), 10_000);
    const released = Date.now();
    first.release();
    await waitFor('the work to be handed over', () => rounds.handedOver === 1, PROMPT_MS, 10);
    expect(rounds.rounds.at(-1)!.at - released).toBeLessThan(PROMPT_MS);
  });

  it('a NOTIFY while a round runs makes the next round run at once', async () => {
    const rounds = new Rounds();
    const { channel } = start(rounds);
    await quietRounds(rounds, channel);

    const round = rounds.holdNextRound();
    await notifier.query(`SELECT pg_notify($1, '')`, [channel]);
    await round.read;
    rounds.written += 1;
    await notifier.query(`SELECT pg_notify($1, '')`, [channel]);
    await sleep(200); // the second NOTIFY is heard while the round is still held
    const released = Date.now();
    round.release();
    await waitFor('the work written during the round to be handed over', () => rounds.handedOver === 1, PROMPT_MS, 10);
    expect(rounds.rounds.at(-1)!.at - released).toBeLessThan(PROMPT_MS);
  });

  it('a round that answers when the next work falls due is followed by one at that time', async () => {
    const rounds = new Rounds();
    const { channel } = start(rounds);
    await quietRounds(rounds, channel);

    const due = Date.now() + 500;
    rounds.nextDue = new Date(due);
    const before = rounds.rounds.length;
    await notifier.query(`SELECT pg_notify($1, '')`, [channel]);
    await waitFor('a round answering the due time', () => rounds.rounds.length > before);
    expect(Date.now()).toBeLessThan(due);
    rounds.nextDue = null;
    rounds.written += 1;
    await waitFor('the work due to be handed over', () => rounds.handedOver === 1, PROMPT_MS, 10);
    expect(rounds.rounds.at(-1)!.at).toBeGreaterThanOrEqual(due);
    expect(rounds.rounds.at(-1)!.at - due).toBeLessThan(PROMPT_MS);
  });

  it('a burst of wake-ups is served by a round every ROUND_GAP_MS at most, the work of the last one too', async () => {
    const rounds = new Rounds();
    const { channel } = start(rounds);
    await quietRounds(rounds, channel);

    const before = rounds.rounds.length;
    const started = Date.now();
    // Steady traffic: a write and its NOTIFY every millisecond or so.
    for (let i = 0; i < 200; i++) {
      rounds.written += 1;
      loop!.poke();
      await sleep(1);
    }
    const burst = Date.now() - started;
    await waitFor('all the work to be handed over', () => rounds.handedOver === rounds.written, PROMPT_MS, 10);
    const starts = rounds.rounds.slice(before).map((round) => round.at);
    expect(starts.length).toBeLessThanOrEqual(Math.ceil(burst / ROUND_GAP_MS) + 2);
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(ROUND_GAP_MS - 2);
  });
});
