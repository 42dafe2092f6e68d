import { Logger } from '@nestjs/common';
import { Client } from 'pg';

export interface ChannelEvents {
  /** A notification on the channel, with its payload. */
  message(payload: string): void;
  /**
   * LISTEN holds from now on (first time, or again after a loss): nothing said before is known. `citus`: the database
   * is a Citus coordinator, where a NOTIFY made on a worker node (by a delegated function, or a write routed to a
   * shard) is never heard here.
   */
  listening(database: { citus: boolean }): void;
  /** The connection was lost (or never made): notifications may be missed until `listening` comes again. */
  lost(): void;
}

const RETRY_MAX_MS = 5000;

/**
 * One Postgres connection of its own that LISTENs on a channel (NOTIFY is delivered at the sender's commit), outside
 * the pool so that no request waits behind it. A lost connection is reported and made again with a capped backoff
 * for as long as the listener runs.
 */
export class ChannelListener {
  private readonly logger = new Logger(ChannelListener.name);
  private client: Client | null = null;
  private running = false;
  private retry: NodeJS.Timeout | null = null;
  private failures = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly channel: string,
    private readonly events: ChannelEvents,
  ) {}

  get started(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 5000, keepAlive: true });
    client.on('notification', (n) => {
      if (n.channel === this.channel) this.events.message(n.payload ?? '');
    });
    client.on('error', () => this.onLost(client));
    client.on('end', () => this.onLost(client));
    this.client = client;
    let citus: boolean;
    try {
      await client.connect();
      citus = (await client.query(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`)).rows[0].citus;
      // LISTEN last: the connection then shows as listening on its channel (pg_stat_activity's last query).
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    } catch (error) {
      if (this.failures === 0) this.logger.warn(`cannot listen on ${this.channel}: ${(error as Error).message}`);
      this.onLost(client);
      return;
    }
    if (this.client !== client) {
      await client.end().catch(() => undefined); // stopped meanwhile
      return;
    }
    this.failures = 0;
    this.events.listening({ citus });
  }

  private onLost(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    void client.end().catch(() => undefined);
    this.events.lost();
    if (!this.running) return;
    this.failures += 1;
    this.retry = setTimeout(() => void this.connect(), Math.min(this.failures * 200, RETRY_MAX_MS));
  }
}
