import { AddressInfo, connect, createServer, Server, Socket } from 'node:net';

// scripts/migrate.js is the compose `migrate` service's command; it may start before Postgres accepts connections.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { waitForDatabase } = require('../../scripts/migrate') as {
  waitForDatabase: (url: string, options: { timeoutMs: number; intervalMs: number; log: (line: string) => void }) => Promise<void>;
};

/** Postgres's answer to a connection while it is still starting up (an ErrorResponse with SQLSTATE 57P03). */
function startingUp(): Buffer {
  const fields = ['SFATAL', 'VFATAL', 'C57P03', 'Mthe database system is starting up'].map((field) => Buffer.from(`${field}\0`));
  const body = Buffer.concat([...fields, Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header.write('E');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

describe('scripts/migrate.js waitForDatabase', () => {
  const database = new URL(process.env.DATABASE_URL!);
  const servers: Server[] = [];
  const sockets: Socket[] = [];

  afterEach(async () => {
    sockets.forEach((socket) => socket.destroy());
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /** A port nothing listens on (listened on once, then closed). */
  async function closedPort(): Promise<number> {
    const server = createServer();
    const port = await listen(server);
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it('gives up with a clear message after the bounded wait while nothing listens', async () => {
    const lines: string[] = [];
    const port = await closedPort();
    const started = Date.now();
    await expect(
      waitForDatabase(`postgres://postgres:secret@127.0.0.1:${port}/paygate`, {
        timeoutMs: 1_000,
        intervalMs: 200,
        log: (line) => lines.push(line),
      }),
    ).rejects.toThrow(`the database at 127.0.0.1:${port} did not accept connections within 1 s (ECONNREFUSED`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(lines).toEqual([expect.stringContaining(`waiting for the database at 127.0.0.1:${port} (ECONNREFUSED`)]);
    expect(lines.join('\n')).not.toContain('secret');
  });

  it('retries while Postgres answers "starting up", then goes on once it accepts connections', async () => {
    let answered = 0;
    const server = createServer((socket) => {
      sockets.push(socket);
      if (answered < 2) {
        answered += 1;
        socket.once('data', () => socket.end(startingUp()));
        return;
      }
      // From the third connection on, the real server answers through this port.
      const upstream = connect(Number(database.port || 5432), database.hostname);
      sockets.push(upstream);
      socket.pipe(upstream).pipe(socket);
    });
    servers.push(server);
    const port = await listen(server);
    const url = new URL(database.toString());
    url.hostname = '127.0.0.1';
    url.port = String(port);
    const lines: string[] = [];

    await waitForDatabase(url.toString(), { timeoutMs: 10_000, intervalMs: 100, log: (line) => lines.push(line) });

    expect(answered).toBe(2);
    expect(lines).toEqual([expect.stringContaining('(57P03: the database system is starting up)')]);
  });

  it('fails at once on an error waiting cannot fix (a database that does not exist)', async () => {
    const url = new URL(database.toString());
    url.pathname = '/no_such_database_here';
    const started = Date.now();
    await expect(waitForDatabase(url.toString(), { timeoutMs: 10_000, intervalMs: 1_000, log: () => undefined })).rejects.toMatchObject({
      code: '3D000',
    });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
