import { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { backendCpu, backendSecondsBetween, cpuTimes, machineCpu, pgCounters } from './machine';

export interface Snapshot {
  at: number;
  api: number;
  workers: number;
  redis: number;
  self: number;
  machine: { busy: number; total: number };
  backends: Map<number, number>;
  xactCommit: number;
  xactRollback: number;
  wal: { records: number; bytes: number; syncs: number; writes: number };
  redisCommands: number;
  redisScripts: number;
}

/** CPU of every process involved, and Postgres/Redis counters, between two snapshots, per unit of work. */
export class Meter {
  constructor(
    readonly db: Client,
    readonly dbName: string,
    private readonly procs: Processes,
    private readonly redis: Redis,
  ) {}

  async snapshot(): Promise<Snapshot> {
    const safe = (pid: number | null | undefined) => {
      try {
        return pid ? cpuTimes(pid) : 0;
      } catch {
        return 0;
      }
    };
    const pg = await pgCounters(this.db, this.dbName);
    const info = await this.redis.info('stats');
    const commandStats = await this.redis.info('commandstats');
    const scripts = [...commandStats.matchAll(/cmdstat_(?:evalsha|eval|evalsha_ro|eval_ro|fcall):calls=(\d+)/g)].reduce(
      (sum, x) => sum + Number(x[1]),
      0,
    );
    const self = process.cpuUsage();
    return {
      at: performance.now(),
      api: this.procs.apis.reduce((sum, a) => sum + safe(a.pid), 0),
      workers: this.procs.workers.reduce((sum, w) => sum + safe(w.pid), 0),
      redis: safe(this.procs.redisPid),
      self: (self.user + self.system) / 1e6,
      machine: machineCpu(),
      backends: await backendCpu(this.db, this.dbName),
      xactCommit: pg.commits,
      xactRollback: pg.rollbacks,
      wal: { records: pg.walRecords, bytes: pg.walBytes, syncs: pg.walFlushes, writes: pg.walWrites },
      redisCommands: Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0),
      redisScripts: scripts,
    };
  }

  /**
   * Per unit: CPU milliseconds of each process, Postgres commits, WAL records/bytes/flushes (pg_stat_wal is
   * server-wide: other databases' writes would count too) and Redis commands; and each process's share of the
   * window (100 % = one core).
   */
  costs(a: Snapshot, b: Snapshot, units: number, unit: string) {
    const seconds = (b.at - a.at) / 1000;
    const pg = backendSecondsBetween(a.backends, b.backends);
    const cpu = { api: b.api - a.api, workers: b.workers - a.workers, postgres: pg, redis: b.redis - a.redis, bench: b.self - a.self };
    const machineBusy = b.machine.busy - a.machine.busy;
    const machineTotal = b.machine.total - a.machine.total;
    const per = (v: number, digits = 2) => (units > 0 ? +(v / units).toFixed(digits) : null);
    return {
      unit,
      units,
      seconds: +seconds.toFixed(2),
      cpu_ms: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, per(v * 1000, 3)])),
      cpu_percent_of_one_core: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Math.round((v / seconds) * 100)])),
      machine_busy_percent: machineTotal > 0 ? Math.round((machineBusy / machineTotal) * 100) : null,
      postgres_commits: per(b.xactCommit - a.xactCommit),
      postgres_rollbacks: per(b.xactRollback - a.xactRollback),
      wal_records: per(b.wal.records - a.wal.records, 1),
      wal_bytes: per(b.wal.bytes - a.wal.bytes, 0),
      wal_flushes: per(b.wal.syncs - a.wal.syncs, 3),
      // Commands run inside BullMQ's Lua scripts count too; redis_scripts are the script calls (one round trip each).
      redis_commands: per(b.redisCommands - a.redisCommands, 1),
      redis_scripts: per(b.redisScripts - a.redisScripts, 1),
    };
  }
}

export interface Processes {
  /** The first API process (the one autocannon phases drive). */
  api: ChildProcess;
  /** Every API process; their CPU is reported together as the API's. */
  apis: ChildProcess[];
  workers: ChildProcess[];
  redisPid: number | null;
}
