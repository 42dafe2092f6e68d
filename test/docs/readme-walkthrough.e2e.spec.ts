import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Background, killGroup, runToEnd, startInBackground } from '../support/child-processes';
import { CLI_JS, freePort, IsolatedSandbox, ROOT, startIsolatedSandbox, waitFor } from '../support/gateway-fixtures';
import { citusWorkers } from '../support/citus-cluster';

/** README's sandbox walkthrough: from "Your first wallet" up to the section on Daraja's sandbox. */
const FROM = '## Your first wallet';
const UNTIL = '## The sandbox against Daraja';
/** Marks, on the line before a block's fence, a block that keeps running (the callback receiver) or is not run. */
const BACKGROUND = '<!-- walkthrough: background -->';
const NOT_RUN = '<!-- walkthrough: not run -->';
/** A comment line showing an output: the last line the commands above it (since the previous one) print. */
const OUTPUT = /^# ([[{].*)$/;

interface Step {
  commands: string;
  /** What README shows the commands print; "…" and "..." stand for anything. */
  shows: string | null;
}

/** The walkthrough's shell blocks, in order: the background ones, and the others cut into steps at each shown output. */
function walkthrough(readme: string): { background: string[]; steps: Step[] } {
  const text = readme.slice(readme.indexOf(FROM), readme.indexOf(UNTIL));
  const background: string[] = [];
  const steps: Step[] = [];
  for (const block of text.matchAll(/(^.*\n)```sh\n([\s\S]*?)```/gm)) {
    const [, before, body] = block;
    if (before.trim() === NOT_RUN) continue;
    if (before.trim() === BACKGROUND) {
      background.push(body);
      continue;
    }
    let commands: string[] = [];
    for (const line of body.split('\n')) {
      const shown = OUTPUT.exec(line);
      if (shown) {
        steps.push({ commands: commands.join('\n'), shows: shown[1] });
        commands = [];
      } else commands.push(line);
    }
    if (commands.some((line) => line.trim())) steps.push({ commands: commands.join('\n'), shows: null });
  }
  return { background, steps };
}

/** A shown output as a pattern of the whole line: "…" and "..." match anything. */
function pattern(shown: string): RegExp {
  const parts = shown.split(/…|\.\.\./).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*?')}$`);
}

/**
 * Runs README's walkthrough commands as a reader pastes them, in one shell, against a fresh sandbox seeded as
 * `npm run sandbox` seeds it, and checks every output README shows. The only changes: the sandbox's and the
 * receiver's ports (free ones here), placeholders `<name>` filled from the seed's output, quicker rails, and curl
 * made to fail on an HTTP error status, so that every request of the walkthrough must succeed.
 */
describe('README walkthrough', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let seed: Record<string, string>;
  let base: string;
  let receiverPort: number;
  let work: string;
  const running: Background[] = [];

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt(); // `npm run admin` in the walkthrough runs the compiled CLI
    const port = await freePort();
    receiverPort = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The rails settle in 0.5 s rather than 2 s, so that README's `sleep 3` leaves room on a loaded CI machine.
    sandbox = await startIsolatedSandbox({ PUBLIC_BASE_URL: base, SANDBOX_SETTLE_DELAY_MS: '500' });
    app = sandbox.app;
    await app.listen(port, '127.0.0.1');
    const seeded = await runToEnd(process.execPath, [CLI_JS, 'seed', '--json'], { env: { ...process.env, DATABASE_URL: sandbox.db.url } });
    expect(seeded).toMatchObject({ code: 0 });
    seed = JSON.parse(seeded.stdout);
    work = mkdtempSync(join(tmpdir(), 'paygate-readme-'));
  });

  afterAll(async () => {
    for (const process of running) killGroup(process);
    await sandbox?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('runs as printed and prints what README shows', async () => {
    const asHere = (commands: string) =>
      commands
        .replaceAll('http://localhost:3000', base)
        .replaceAll('127.0.0.1:4000', `127.0.0.1:${receiverPort}`)
        .replaceAll('.listen(4000,', `.listen(${receiverPort},`)
        .replace(/<(\w+)>/g, (placeholder, name: string) => seed[name] ?? placeholder)
        // On a Citus cluster a worker node's copy of a sequence counts from its group << 48 (docs/scaling.md): the
        // first charge there is not number 1.
        .replace(/"charge_request_id":1,/g, (shown) => (citusWorkers().length > 0 ? '"charge_request_id":…,' : shown));
    const { background, steps } = walkthrough(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(background).toHaveLength(1); // the callback receiver
    expect(steps.filter((s) => s.shows).length).toBeGreaterThanOrEqual(5);

    const env = { ...process.env, DATABASE_URL: sandbox.db.url };
    for (const block of background) running.push(startInBackground('bash', ['-c', asHere(block)], env));
    await waitFor('the receiver', () =>
      fetch(`http://127.0.0.1:${receiverPort}/`, { method: 'POST', body: '{}' })
        .then((r) => r.ok)
        .catch(() => false),
    );

    const marker = (i: number) => `@@step ${i}@@`;
    const script = [
      'set -eo pipefail',
      'curl() { command curl --fail-with-body "$@"; }',
      // `npm run admin` as from the checkout; the rest runs in a scratch folder (the statements are saved there).
      `npm() { (cd ${JSON.stringify(ROOT)} && command npm "$@"); }`,
      ...steps.map((step, i) => `${asHere(step.commands)}\nprintf '\\n${marker(i)}\\n'`),
    ].join('\n');
    const run = await runToEnd('bash', ['-c', script], { cwd: work, env, timeoutMs: 60_000 });
    const outputs = run.stdout.split(/\n@@step \d+@@\n/);
    expect({ code: run.code, stderr: run.stderr, done: outputs.length - 1 }).toEqual({
      code: 0,
      stderr: expect.any(String),
      done: steps.length,
    });

    // Every output README shows, each with the commands above it and what they printed last.
    const wrong = steps.flatMap((step, i) => {
      const lines = outputs[i].trimEnd().split('\n');
      const printed = lines[lines.length - 1];
      return step.shows && !pattern(asHere(step.shows)).test(printed) ? [{ commands: step.commands, shows: step.shows, printed }] : [];
    });
    expect(wrong).toEqual([]);
  }, 120_000);
});
