import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { answers, Background, databaseExists, killGroup, runToEnd, scratchDatabase, startInBackground } from '../support/child-processes';
import { freePort, waitFor } from '../support/gateway-fixtures';

// A sandbox boots a whole server (and compiles nothing: `npm test` built dist/ already); on a loaded 2-core machine
// that can take a while, so readiness waits are generous. The shutdown bound is strict and measured from SIGINT.
jest.setTimeout(300_000);
const READY_WITHIN_MS = 180_000;
const STOPS_WITHIN_MS = 2000;

interface SandboxState {
  pid: number;
  baseUrl: string;
  databaseUrl: string;
  redisUrl: string;
}

/** `node scripts/sandbox.js` in a process group of its own, as in a terminal, on a scratch database. */
async function startSandbox(redisUrl: string, databaseUrl: string) {
  const stateDir = mkdtempSync(join(tmpdir(), 'paygate-sandbox-state-'));
  const stateFile = join(stateDir, 'state.json');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    PORT: String(port),
    PUBLIC_BASE_URL: '',
    LOG_LEVEL: 'info',
    PAYGATE_SANDBOX_STATE: stateFile,
  };
  const sandbox = startInBackground(process.execPath, ['scripts/sandbox.js'], env);
  const state = await waitFor<SandboxState>(
    'the sandbox state file',
    () => {
      if (sandbox.child.exitCode !== null) throw new Error(`the sandbox exited early:\n${sandbox.output()}`);
      return existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as SandboxState) : undefined;
    },
    READY_WITHIN_MS,
    250,
  );
  await waitFor('/health/live', () => answers(`${state.baseUrl}/health/live`), READY_WITHIN_MS, 250);
  await waitFor('the credentials box', () => sandbox.output().includes('Press Ctrl+C to stop'), 30_000);
  return { sandbox, state, stateFile, port, cleanup: () => rmSync(stateDir, { recursive: true, force: true }) };
}

/** Ctrl+C in a terminal: SIGINT to the whole process group. Resolves with the exit and how long it took. */
async function interrupt(sandbox: Background) {
  const sentAt = Date.now();
  process.kill(-sandbox.child.pid!, 'SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([sandbox.exited, new Promise<null>((done) => (timer = setTimeout(() => done(null), 20_000)))]);
  clearTimeout(timer);
  return { exit, tookMs: exit ? exit.at - sentAt : Infinity };
}

/** The lines of the credentials box, borders included. */
function boxLines(output: string): string[] {
  const lines = output.split('\n');
  const top = lines.findIndex((l) => l.startsWith('┌'));
  const bottom = lines.findIndex((l, i) => i > top && l.startsWith('└'));
  expect(top).toBeGreaterThanOrEqual(0);
  expect(bottom).toBeGreaterThan(top);
  return lines.slice(top, bottom + 1);
}

function boxValue(box: string[], label: string): string {
  const line = box.find((l) => new RegExp(`^│\\s+${label}\\s`).test(l));
  expect(line).toBeDefined();
  return line!.replace(new RegExp(`^│\\s+${label}\\s+`), '').trim();
}

describe('npm run sandbox, then npm run admin from a second terminal', () => {
  let database: Awaited<ReturnType<typeof scratchDatabase>>;
  let started: Awaited<ReturnType<typeof startSandbox>> | undefined;

  beforeAll(async () => {
    database = await scratchDatabase('paygate_sandbox');
    started = await startSandbox(process.env.REDIS_URL!, database.url);
  });
  afterAll(async () => {
    killGroup(started?.sandbox);
    started?.cleanup();
    await database.drop();
  });

  it('writes its URLs to the state file, and prints short logs and a credentials box that fits 100 columns', async () => {
    const { state, sandbox, port } = started!;
    expect(state).toMatchObject({ baseUrl: `http://localhost:${port}`, databaseUrl: database.url, redisUrl: process.env.REDIS_URL });
    expect(state.pid).toBe(sandbox.child.pid);

    const box = boxLines(sandbox.output());
    for (const line of box) expect([...line].length).toBeLessThanOrEqual(100);
    // The credentials in the box are whole: the gateway key shown there works.
    const res = await fetch(`${state.baseUrl}/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ consumer_key: boxValue(box, 'consumer_key'), consumer_secret: boxValue(box, 'consumer_secret') }),
    });
    expect(res.status).toBe(200);

    // One short line per request, and no raw JSON log lines anywhere (Nest's start-up chatter is left out).
    await waitFor('the request log line', () => /\d\d:\d\d:\d\d {2}POST \/v1\/auth 200 \d+ ms/.test(sandbox.output()), 10_000);
    expect(
      sandbox
        .output()
        .split('\n')
        .filter((l) => l.trimStart().startsWith('{"')),
    ).toEqual([]);
    const beforeBox = sandbox.output().slice(0, sandbox.output().indexOf('┌')).split('\n');
    expect(beforeBox.length).toBeLessThan(25);
    expect(sandbox.output()).not.toMatch(/Mapped \{/);
  });

  it('admin api-key:create --json, run without DATABASE_URL, prints one JSON object and the key works on the sandbox', async () => {
    const { state, stateFile } = started!;
    const env: NodeJS.ProcessEnv = { ...process.env, PAYGATE_SANDBOX_STATE: stateFile };
    delete env.DATABASE_URL;
    const result = await runToEnd('npm', ['run', '-s', 'admin', '--', 'api-key:create', '--client', 'DEMO', '--json'], { env });
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n').filter((l) => l.length > 0);
    expect(lines).toHaveLength(1);
    const key = JSON.parse(lines[0]);
    expect(key).toEqual({ client_code: 'DEMO', consumer_key: expect.any(String), consumer_secret: expect.any(String) });

    const res = await fetch(`${state.baseUrl}/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ consumer_key: key.consumer_key, consumer_secret: key.consumer_secret }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ access_token: expect.any(String) });
  });

  it('stops within 2 s of Ctrl+C with exit code 130 and removes its state file', async () => {
    const { sandbox, state, stateFile } = started!;
    const { exit, tookMs } = await interrupt(sandbox);
    expect(exit).toMatchObject({ code: 130 });
    expect(tookMs).toBeLessThan(STOPS_WITHIN_MS);
    expect(existsSync(stateFile)).toBe(false);
    expect(await answers(`${state.baseUrl}/health/live`)).toBe(false);
  });
});

describe('npm run sandbox without a reachable Redis', () => {
  it('starts anyway and still stops within 2 s of Ctrl+C', async () => {
    const database = await scratchDatabase('paygate_sandbox');
    const nowhere = `redis://127.0.0.1:${await freePort()}`;
    let started: Awaited<ReturnType<typeof startSandbox>> | undefined;
    try {
      started = await startSandbox(nowhere, database.url);
      expect(boxLines(started.sandbox.output()).join('\n')).toContain('NOT reachable');
      const { exit, tookMs } = await interrupt(started.sandbox);
      expect(exit).toMatchObject({ code: 130 });
      expect(tookMs).toBeLessThan(STOPS_WITHIN_MS);
    } finally {
      killGroup(started?.sandbox);
      started?.cleanup();
      await database.drop();
    }
  });
});

describe('npm run admin refuses a database that is not the sandbox one', () => {
  const admin = (env: NodeJS.ProcessEnv) =>
    runToEnd('npm', ['run', '-s', 'admin', '--', 'api-key:create', '--client', 'DEMO', '--json'], {
      env: { ...process.env, PAYGATE_SANDBOX_STATE: join(tmpdir(), 'paygate-no-sandbox-here.json'), ...env },
    });
  const oneLineError = (stderr: string) => stderr.split('\n').filter((l) => l.trim() && !l.startsWith('npm warn'));

  it('an empty database: non-zero exit, one line on stderr, nothing on stdout, nothing created', async () => {
    const empty = await scratchDatabase('paygate_empty');
    try {
      const result = await admin({ DATABASE_URL: empty.url });
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      const lines = oneLineError(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^error: database "${empty.name}" on .+ is not migrated`));
      const client = new Client({ connectionString: empty.url });
      await client.connect();
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`);
      await client.end();
      expect(rows[0].n).toBe(0);
    } finally {
      await empty.drop();
    }
  });

  it('a database that does not exist is not created', async () => {
    const url = new URL(process.env.TEST_SERVER_DATABASE_URL!);
    const name = `paygate_absent_${Date.now()}`;
    url.pathname = `/${name}`;
    const result = await admin({ DATABASE_URL: url.toString() });
    expect(result.code).not.toBe(0);
    expect(oneLineError(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^error: database "${name}" on .+ does not exist`))]);
    expect(await databaseExists(name)).toBe(false);
  });
});
