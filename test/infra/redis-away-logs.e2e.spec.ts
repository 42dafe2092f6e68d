import { runToEnd, startChild, stopChild, type Child } from '../support/child-processes';
import { CLI_JS, freePort, waitFor } from '../support/gateway-fixtures';

/** A stack trace's frame line, as Node prints an error nobody handled. */
const STACK_FRAME = /^\s+at /m;

/** Without Redis the server and the operator CLI say so in one line, never with raw stack traces. */
describe('logs while Redis is away', () => {
  let redisUrl: string;
  let child: Child | undefined;

  beforeAll(async () => {
    redisUrl = `redis://127.0.0.1:${await freePort()}`; // nothing listens there
  });
  afterAll(async () => child && stopChild(child));

  it('the API logs one line per component and no stack trace, and serves', async () => {
    const port = await freePort();
    child = startChild('api', ['api'], { ...process.env, REDIS_URL: redisUrl, PORT: String(port), LOG_LEVEL: 'warn' });
    await waitFor('the API to answer', async () => (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null))?.ok);
    await waitFor('the queue warning', () => child!.output.join('').includes('ECONNREFUSED'));
    const output = child.output.join('');
    expect(output).not.toMatch(STACK_FRAME);
    const refused = output.split('\n').filter((line) => line.includes('ECONNREFUSED'));
    expect(refused).toEqual([expect.stringMatching(/"msg":"queue [\w.-]+: connect ECONNREFUSED/)]);
  });

  it('an operator command that needs no Redis prints nothing about it', async () => {
    const run = await runToEnd(process.execPath, [CLI_JS, 'api-key:list', '--client', 'NO-SUCH-CLIENT'], {
      env: { ...process.env, REDIS_URL: redisUrl },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(STACK_FRAME);
    expect(run.stderr).not.toContain('ECONNREFUSED');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
