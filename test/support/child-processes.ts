import { ChildProcess, spawn } from 'node:child_process';
import { MAIN_JS, ROOT } from './gateway-fixtures';

/** A compiled process of the server (`node dist/src/main.js <role>`) with the tail of its output kept. */
export interface Child {
  name: string;
  process: ChildProcess;
  output: string[];
}

export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [MAIN_JS, ...args], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 400) output.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { name, process: child, output };
}

export async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 10_000);
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
  return children.map((c) => `--- ${c.name} (exit ${c.process.exitCode})\n${c.output.join('').slice(-3000)}`).join('\n');
}
