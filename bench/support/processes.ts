/** The processes a benchmark runs: the server's roles, the admin CLI and a redis-server of its own. */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { CLI_JS, freePort, log, MAIN_JS, ROOT, sleep } from './environment';

export interface RoleOptions {
  /** Added to the environment (after the bench's defaults LOG_LEVEL=warn and APP_ENV=sandbox). */
  env: Record<string, string>;
  /** Run under --cpu-prof, writing the profile into this directory at exit. */
  profileDir?: string | null;
}

/** `node dist/src/main.js <role>` with the bench's environment; its output goes to the bench's. */
export function startRole(role: 'api' | 'worker' | 'sandbox', options: RoleOptions): ChildProcess {
  const flags = options.profileDir ? ['--cpu-prof', '--cpu-prof-dir', options.profileDir] : [];
  return spawn(process.execPath, [...flags, MAIN_JS, role], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      APP_ENV: process.env.APP_ENV ?? 'sandbox',
      // One merchant's token sends every request of a run: the per-token limit (60,000 a minute) would answer 429.
      GATEWAY_RATE_LIMIT_PER_MINUTE: process.env.GATEWAY_RATE_LIMIT_PER_MINUTE ?? '1000000000',
      ...options.env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

export async function waitForLive(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`API exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/health/live`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error('API did not become live within 60 s');
}

/** SIGTERM, then SIGKILL after `graceMs` (a process killed so writes no --cpu-prof profile). */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(graceMs)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export interface OwnRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** `redis-server --port N --save "" --appendonly no`, a child of this process. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await sleep(50);
  }
  log(`redis-server pid ${child.pid} on ${url}`);
  return { url, pid: child.pid!, stop: () => stopChild(child) };
}

export function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_JS, ...args],
      { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
