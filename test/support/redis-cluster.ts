import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { freePort } = require('../../scripts/lib/services') as { freePort: () => Promise<number> };

/** A local Redis Cluster of three masters made from Debian's redis-server; nothing is kept on disk after stop(). */
export interface LocalRedisCluster {
  /** The seeds, as REDIS_CLUSTER_NODES takes them. */
  nodes: string;
  ports: number[];
  stop(): Promise<void>;
}

const MASTERS = 3;

async function cli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })).stdout;
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`redis cluster: timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts three cluster-enabled redis-servers on free loopback ports, joins them with `redis-cli --cluster create`
 * (no replicas) and waits until every node reports `cluster_state:ok`. Each node's cluster bus gets a free port of
 * its own: the default (port + 10000) may be taken, or past 65535 for a port picked by the system.
 */
export async function startRedisCluster(): Promise<LocalRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-redis-cluster-'));
  const picked = new Set<number>();
  while (picked.size < MASTERS * 2) picked.add(await freePort());
  const [ports, busPorts] = [[...picked].slice(0, MASTERS), [...picked].slice(MASTERS)];
  const servers: ChildProcess[] = [];
  let output = '';

  const stop = async () => {
    const running = servers.filter((server) => server.exitCode === null && server.signalCode === null);
    const exited = running.map((server) => new Promise((resolve) => server.once('exit', resolve)));
    for (const server of running) server.kill('SIGKILL');
    await Promise.all(exited);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    ports.forEach((port, i) => {
      const server = spawn(
        'redis-server',
        [
          '--cluster-enabled',
          'yes',
          '--port',
          String(port),
          '--cluster-port',
          String(busPorts[i]),
          '--bind',
          '127.0.0.1',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      server.stdout!.on('data', (chunk) => (output += chunk));
      server.stderr!.on('data', (chunk) => (output += chunk));
      servers.push(server);
    });
    for (const port of ports) await until(`redis-server on port ${port}`, async () => (await cli(port, 'ping')).trim() === 'PONG', 10_000);
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 30_000,
    });
    for (const port of ports) {
      await until(
        `cluster_state:ok on port ${port}`,
        async () => (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'),
        30_000,
      );
    }
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output.slice(-2000)}`, { cause: error });
  }
  return { nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), ports, stop };
}
