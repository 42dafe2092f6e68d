import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { answers, Background, killGroup, runToEnd, startInBackground } from '../support/child-processes';
import { freePort, ROOT, waitFor } from '../support/gateway-fixtures';

// A full compilation takes 10-30 s on a loaded 2-core machine.
jest.setTimeout(300_000);

describe('npm run build', () => {
  // Into a directory of its own under dist/ (so node_modules resolves), never over the dist/ other tests run.
  const outDir = join(ROOT, 'dist', `build-check-${process.pid}`);
  let server: Background | undefined;

  afterAll(() => {
    killGroup(server);
    rmSync(outDir, { recursive: true, force: true });
  });

  it('compiles with tsc as the Dockerfile does, with the function sources, and the compiled server boots and stops', async () => {
    const build = await runToEnd('npm', ['run', 'build', '--', '--outDir', outDir, '--tsBuildInfoFile', join(outDir, '.tsbuildinfo')], {
      timeoutMs: 240_000,
    });
    expect({ code: build.code, output: build.stdout.includes('error') ? build.stdout : '' }).toEqual({ code: 0, output: '' });
    expect(existsSync(join(outDir, 'src', 'main.js'))).toBe(true);
    expect(existsSync(join(outDir, 'migrations', '1763800000000-Foundation.js'))).toBe(true);
    expect(existsSync(join(outDir, 'src', 'ledger', 'sql', 'ledger_post_entries.sql'))).toBe(true);

    const port = await freePort();
    server = startInBackground(process.execPath, [join(outDir, 'src', 'main.js'), 'api'], {
      ...process.env,
      PORT: String(port),
      PUBLIC_BASE_URL: '',
      LOG_LEVEL: 'warn',
    });
    const booting = server;
    await waitFor(
      '/health/live',
      () => {
        if (booting.child.exitCode !== null) throw new Error(`the server exited:\n${booting.output()}`);
        return answers(`http://127.0.0.1:${port}/health/live`);
      },
      120_000,
      250,
    );
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(ready.status).toBe(200);

    process.kill(server.child.pid!, 'SIGTERM');
    const exit = await server.exited;
    expect(exit.signal ?? exit.code).toBeTruthy(); // ended by the signal, not still running
  });
});
