import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort, waitFor } from './gateway-fixtures';

const run = promisify(execFile);

/** A bound on any one server program run (a base backup of the run's cluster included). */
const PG_PROGRAM_TIMEOUT_MS = 120_000;

/** The line the harness adds to the server's pg_hba.conf when it refuses replication connections from 127.0.0.1. */
const HBA_REPLICATION = 'host replication postgres 127.0.0.1/32 trust';

/** Settings a hot standby must hold at least at the primary's values, or it refuses to start. */
const STANDBY_MINIMUMS = [
  'max_connections',
  'max_worker_processes',
  'max_wal_senders',
  'max_prepared_transactions',
  'max_locks_per_transaction',
];

/**
 * A real streaming replica of the run's Postgres server (TEST_SERVER_DATABASE_URL): `pg_basebackup -R -X stream` of
 * the whole cluster into a temporary directory (so it carries the run's database), started by that major version's
 * `pg_ctl` on a free port of 127.0.0.1. As root, the server's files are the `postgres` user's, as pg_ctl requires.
 */
export class StreamingReplica {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly bin: string,
    private readonly primaryUrl: string,
  ) {}

  /** Base backup and start; several seconds for a cluster of a few hundred MB (a fast checkpoint, then a copy). */
  static async create(primaryUrl = process.env.TEST_SERVER_DATABASE_URL!): Promise<StreamingReplica> {
    const settings = await query<{ name: string; setting: string }>(
      primaryUrl,
      `SELECT name, setting FROM pg_settings WHERE name = ANY($1) OR name = 'server_version_num'`,
      [STANDBY_MINIMUMS],
    );
    const major = Math.floor(Number(settings.find((s) => s.name === 'server_version_num')!.setting) / 10000);
    const dir = await mkdtemp(join(tmpdir(), 'paygate-replica-'));
    if (process.getuid?.() === 0) await chown(dir, ...(await postgresUser()));
    const replica = new StreamingReplica(await freePort(), dir, `/usr/lib/postgresql/${major}/bin`, primaryUrl);
    try {
      await replica.baseBackup();
      // Debian keeps the configuration outside the data directory: the copy gets its own.
      const conf = [
        ...settings.filter((s) => s.name !== 'server_version_num').map((s) => `${s.name} = ${s.setting}`),
        'shared_buffers = 32MB',
        'hot_standby = on',
      ];
      await replica.writeOwned('postgresql.conf', `${conf.join('\n')}\n`);
      await replica.writeOwned('pg_hba.conf', 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
      await replica.writeOwned('pg_ident.conf', '');
      await replica.start();
    } catch (error) {
      await replica.remove();
      throw error;
    }
    return replica;
  }

  /** The URL of `database` on the replica. */
  url(database = process.env.TEST_DATABASE_NAME!): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`;
    await this.pg('pg_ctl', ['-D', this.data, '-l', join(this.dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
    await waitFor(
      'the replica to stream from the primary',
      async () => (await this.sql(`SELECT count(*)::int AS n FROM pg_stat_wal_receiver`))[0].n === 1,
    );
  }

  /** A fast shutdown: open connections are cut, as when a replica's machine goes away. */
  async stop(): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', 'stop']);
  }

  async remove(): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.data, '-m', 'immediate', '-w', '-t', '20', 'stop']).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Waits until the replica has replayed everything the primary had written when asked. */
  async catchUp(): Promise<void> {
    const [{ lsn }] = await query<{ lsn: string }>(this.primaryUrl, `SELECT pg_current_wal_lsn()::text AS lsn`);
    await waitFor(
      `the replica to replay up to ${lsn}`,
      async () => (await this.sql(`SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok`, [lsn]))[0].ok,
    );
  }

  /** Stops replaying WAL (still received): the replica keeps answering from its state at this point. */
  async pauseReplay(): Promise<void> {
    await this.sql(`SELECT pg_wal_replay_pause()`);
    await waitFor('replay to pause', async () => (await this.sql(`SELECT pg_get_wal_replay_pause_state() AS s`))[0].s === 'paused');
  }

  async resumeReplay(): Promise<void> {
    await this.sql(`SELECT pg_wal_replay_resume()`);
  }

  /** A query on the run's database on the replica. */
  sql<R extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> {
    return query<R>(this.url(), text, values);
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  private async baseBackup(): Promise<void> {
    const backup = () =>
      this.pg('pg_basebackup', ['-d', this.primaryUrl, '-D', this.data, '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
    try {
      await backup();
    } catch (error) {
      if (!/no pg_hba.conf entry for replication/.test(String((error as { stderr?: string }).stderr))) throw error;
      await allowReplication(this.primaryUrl);
      // The postmaster reads the file again on its own time after the reload signal.
      await waitFor('a base backup once replication is allowed', () => backup().then(() => true), 10_000, 200);
    }
  }

  private async writeOwned(file: string, text: string): Promise<void> {
    const path = join(this.data, file);
    await writeFile(path, text, { mode: 0o600 });
    if (process.getuid?.() === 0) await chown(path, ...(await postgresUser()));
  }

  /**
   * Runs one of the server's programs, as `postgres` when the tests run as root (pg_ctl refuses root), killed if it
   * is still running after PG_PROGRAM_TIMEOUT_MS (pg_ctl's own waits are shorter).
   */
  private async pg(program: string, args: string[]): Promise<void> {
    const path = join(this.bin, program);
    const options = { timeout: PG_PROGRAM_TIMEOUT_MS, killSignal: 'SIGKILL' as const };
    if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', path, ...args], options);
    else await run(path, args, options);
  }
}

/**
 * Appends HBA_REPLICATION to the primary's pg_hba.conf and reloads it: a Debian cluster's file trusts local TCP
 * connections to databases, not replication ones. Only done when pg_basebackup was refused, and kept (the line is
 * as trusting as the file's own 127.0.0.1 entry).
 */
async function allowReplication(primaryUrl: string): Promise<void> {
  const [{ hba_file: hba }] = await query<{ hba_file: string }>(primaryUrl, `SHOW hba_file`);
  await appendFile(
    hba,
    `\n# Added by paygate's test harness (test/support/read-replica.ts) for its streaming replica\n${HBA_REPLICATION}\n`,
  );
  await query(primaryUrl, `SELECT pg_reload_conf()`);
}

async function postgresUser(): Promise<[number, number]> {
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: group } = await run('id', ['-g', 'postgres']);
  return [Number(stdout.trim()), Number(group.trim())];
}

async function query<R extends Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
