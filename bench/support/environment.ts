/** Where the benchmarks find the project and their Postgres server, their load settings, and small helpers. */
import { createServer } from 'node:net';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
export const MAIN_JS = join(ROOT, 'dist', 'src', 'main.js');
export const CLI_JS = join(ROOT, 'dist', 'src', 'admin', 'cli.js');
/** The Postgres server the benchmarks create their database on. */
export const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const log = (line: string) => console.log(`[bench] ${line}`);

/** Seconds of each load phase and autocannon connections; the reference ceiling runs with the same. */
export const DURATION = Number(process.env.BENCH_DURATION ?? 15);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Compiles dist/ when the sources are newer (what `npm run sandbox` and `npm run admin` do). */
export function ensureBuilt(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require(join(ROOT, 'scripts', 'lib', 'build')).ensureBuilt();
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
