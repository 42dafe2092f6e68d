import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { MAIN_JS, ROOT } from './gateway-fixtures';

/**
 * Child processes for tests: the npm scripts (sandbox, admin, build) in process groups of their own with empty
 * scratch databases (the scripts migrate, or must refuse to use, them), and compiled server processes
 * (`startChild`) that multi-process tests stop or crash.
 */

/** GET url answers 2xx (false while nothing listens). */
export async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/** A database of its own on the run's server (TEST_SERVER_DATABASE_URL, set by the global setup); drop() removes it. */
export async function scratchDatabase(prefix: string): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const serverUrl = process.env.TEST_SERVER_DATABASE_URL!;
  const name = `${prefix}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => dropDatabase(name) };
}

export async function databaseExists(name: string): Promise<boolean> {
  const admin = new Client({
    connectionString: process.env.TEST_SERVER_DATABASE_URL!,
  });
  await admin.connect();
  try {
    return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await admin.end();
  }
}

async function dropDatabase(name: string): Promise<void> {
  const admin = new Client({
    connectionString: process.env.TEST_SERVER_DATABASE_URL!,
  });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end. Past `timeoutMs` its whole process group is killed: a script's own children (npm runs
 * node) hold the output pipes open, so killing the script alone would leave the run waiting on them.
 */
export function runToEnd(command: string, args: string[], options: SpawnOptions & { timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      ...options,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }, options.timeoutMs ?? 120_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

/** A long-running child whose output is kept, started in a process group of its own (as a terminal would). */
export interface Background {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    at: number;
  }>;
}

export function startInBackground(command: string, args: string[], env: NodeJS.ProcessEnv): Background {
  const child = spawn(command, args, {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    at: number;
  }>((done) => child.once('exit', (code, signal) => done({ code, signal, at: Date.now() })));
  return { child, output: () => output, exited };
}

/** Kills the whole process group of a background child (what is left of it after a failed test). */
export function killGroup(background: Background | undefined): void {
  if (!background?.child.pid || background.child.exitCode !== null || background.child.signalCode !== null) return;
  try {
    process.kill(-background.child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** A compiled process of the server (`node dist/src/main.js <role>`) with the tail of its output kept. */
export interface Child {
  name: string;
  process: ChildProcess;
  output: string[];
}

export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [MAIN_JS, ...args], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 400) output.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { name, process: child, output };
}

/** Asks the process to stop (SIGTERM) and kills it (SIGKILL) if it is still there after `graceMs`; resolves once it is gone. */
export async function stopChild(child: Child, graceMs = 10_000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Kills the process as a crash would (SIGKILL) and waits for it to be gone. */
export async function killChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  child.process.kill('SIGKILL');
  await exited;
}

export function diagnostics(children: Child[]): string {
  return children
    .map((c) => `--- ${c.name} (exit ${c.process.exitCode}, signal ${c.process.signalCode})\n${c.output.join('').slice(-3000)}`)
    .join('\n');
}
