/** Postgres round trips counted at a proxy: the proxy, and the gateway's requests counted through it. */
import { connect, createServer, Socket } from 'node:net';
import { freePort, sleep } from './environment';
import type { GatewayBench } from './gateway-bench';
import { startRole, stopChild, waitForLive } from './processes';

/**
 * A TCP proxy in front of Postgres that counts round trips: the frontend messages after which node-postgres
 * waits for the server, Query (simple protocol) and Sync (extended protocol: Parse/Bind/Describe/Execute/Sync per
 * parameterised query, one query at a time per connection). With `trace` set, the first characters of each
 * round trip's SQL are appended to it, prefixed by the connection's number.
 */
export class PgRoundTripCounter {
  roundTrips = 0;
  trace: string[] | null = null;
  port = 0;
  private server!: ReturnType<typeof createServer>;
  private readonly sockets = new Set<Socket>();
  private connections = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** A counter in front of the server of `databaseUrl`. */
  static async for(databaseUrl: string): Promise<PgRoundTripCounter> {
    const u = new URL(databaseUrl);
    return new PgRoundTripCounter({ host: u.hostname, port: Number(u.port || 5432) }).start();
  }

  /** A copy of `databaseUrl` that connects through this proxy. */
  url(databaseUrl: string): string {
    const u = new URL(databaseUrl);
    u.host = `127.0.0.1:${this.port}`;
    return u.toString();
  }

  async start(): Promise<this> {
    this.server = createServer((client) => {
      const id = ++this.connections;
      const upstream = connect(this.target.port, this.target.host);
      this.sockets.add(client).add(upstream);
      let pendingSql: string | null = null;
      const sqlOf = (body: Buffer, skipName: boolean) => {
        let text = body.toString('utf8');
        if (skipName) text = text.slice(text.indexOf('\0') + 1);
        return text
          .slice(0, Math.max(0, text.indexOf('\0')))
          .replace(/\s+/g, ' ')
          .trim();
      };
      const parse = frontendParser((type, body) => {
        if (type === 0x50 /* P */) pendingSql = sqlOf(body!, true);
        else if (type === 0x51 /* Q */ || type === 0x53 /* S */) {
          this.roundTrips++;
          this.trace?.push(`c${id}: ${(type === 0x51 ? sqlOf(body!, false) : (pendingSql ?? '(prepared)')).slice(0, 90)}`);
          pendingSql = null;
        }
      });
      client.on('data', (chunk: Buffer) => {
        parse(chunk);
        upstream.write(chunk);
      });
      upstream.pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Calls onMessage with the type byte of every frontend message (and the body of Parse and Query messages); the
 * startup packet (and an SSLRequest before it) has no type byte.
 */
function frontendParser(onMessage: (type: number, body: Buffer | null) => void) {
  let startup = true;
  let header = Buffer.alloc(0);
  let remaining = 0; // body bytes of the current message still to come
  let type = 0; // 0: the startup packet, not reported
  let body: Buffer[] | null = null; // collected for P and Q only
  return (chunk: Buffer) => {
    let i = 0;
    while (i < chunk.length) {
      if (remaining > 0) {
        const n = Math.min(remaining, chunk.length - i);
        body?.push(chunk.subarray(i, i + n));
        remaining -= n;
        i += n;
        if (remaining === 0 && type !== 0) onMessage(type, body ? Buffer.concat(body) : null);
        continue;
      }
      const headerLength = startup ? 4 : 5;
      const take = chunk.subarray(i, i + headerLength - header.length);
      header = Buffer.concat([header, take]);
      i += take.length;
      if (header.length < headerLength) break;
      if (startup) {
        const length = header.readInt32BE(0);
        type = 0;
        body = null;
        remaining = length - 4;
        // 8 bytes: an SSLRequest/GSSENCRequest, after which the startup packet follows; otherwise typed messages.
        if (length !== 8) startup = false;
      } else {
        type = header[0];
        remaining = header.readInt32BE(1) - 4;
        body = type === 0x50 || type === 0x51 ? [] : null;
        if (remaining === 0) onMessage(type, body ? Buffer.alloc(0) : null);
      }
      header = Buffer.alloc(0);
    }
  };
}

/**
 * A worker's trace without the outbox relay's polling (its claim, its relayed_at update and the BEGIN/COMMIT
 * around them on the same connection) and the callback deliverer's claims, which run every 50 ms whatever the jobs
 * do (a claim that finds a delivery takes up to 100 at once, so it costs a delivery about nothing).
 */
export function withoutRelayPolls(trace: string[]): string[] {
  const isRelay = (line: string) => /FROM outbox WHERE relayed_at IS NULL|UPDATE outbox SET relayed_at|: WITH replays AS/.test(line);
  const isTx = (line: string) => /: (BEGIN|START TRANSACTION|COMMIT|ROLLBACK)$/.test(line);
  const conn = (line: string) => line.slice(0, line.indexOf(':'));
  const drop = new Set<number>();
  trace.forEach((line, i) => {
    if (!isRelay(line)) return;
    drop.add(i);
    for (const dir of [-1, 1]) {
      for (let j = i + dir; j >= 0 && j < trace.length; j += dir) {
        if (conn(trace[j]) !== conn(line)) continue;
        if (isTx(trace[j])) drop.add(j);
        if (isTx(trace[j]) || !isRelay(trace[j])) break;
      }
    }
  });
  // A transaction already open when the trace began (the relay's, between polls) ends in it without its start.
  const seen = new Set<string>();
  trace.forEach((line, i) => {
    if (drop.has(i) || seen.has(conn(line))) return;
    seen.add(conn(line));
    if (/: (COMMIT|ROLLBACK)$/.test(line)) drop.add(i);
  });
  return trace.filter((_, i) => !drop.has(i));
}

/** One kind of gateway request whose Postgres round trips are counted. */
export interface CountedRequest {
  name: string;
  path: string;
  /** The request body for a fresh reference. */
  body(reference: string): string;
  /** Its result is called back: the worker's round trips until the callback is delivered are counted too. */
  calledBack: boolean;
}

/**
 * Round trips to Postgres per request, counted at a proxy: a second API and one worker (the measured ones are
 * stopped) with no settle delay, `n` sequential requests of each kind so nothing else runs; the worker's idle
 * relay polling is measured first and subtracted. Redis commands per request (every process), and the SQL of
 * one request of each kind (and of its settlement and callback) traced.
 */
export async function countGatewayRoundTrips(bench: GatewayBench, requests: CountedRequest[], n = 200) {
  const { database, receiver, merchant } = bench;
  const apiProxy = await PgRoundTripCounter.for(database.url);
  const workerProxy = await PgRoundTripCounter.for(database.url);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // No settle delay: the API schedules the settlement, so it is the API that must not wait.
  const api = startRole('api', {
    env: { ...bench.env, DATABASE_URL: apiProxy.url(database.url), PORT: String(port), SANDBOX_SETTLE_DELAY_MS: '0' },
  });
  const worker = startRole('worker', {
    env: { ...bench.env, DATABASE_URL: workerProxy.url(database.url), SANDBOX_SETTLE_DELAY_MS: '0' },
  });
  const send = async (request: CountedRequest, reference: string) => {
    const res = await fetch(`${base}${request.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': merchant.token },
      body: request.body(reference),
    });
    if (res.status !== 200) throw new Error(`${request.path} → ${res.status} ${await res.text()}`);
  };
  const redisCommands = async () => Number(/total_commands_processed:(\d+)/.exec(await bench.redis!.info('stats'))?.[1] ?? 0);
  const out: Record<string, unknown> = { requests: n };
  try {
    await waitForLive(base, api);
    // Warm-up, then the worker's idle rate (relay polling).
    const warmer = requests.find((r) => r.calledBack) ?? requests[0];
    const warm = Array.from({ length: 20 }, (_, i) => `rt-warm-${process.pid}-${i}`);
    for (const ref of warm) await send(warmer, ref);
    if (warmer.calledBack) await receiver.waitFor(warm);
    await sleep(1000);
    workerProxy.roundTrips = 0;
    let t = performance.now();
    await sleep(3000);
    const idlePerSecond = workerProxy.roundTrips / ((performance.now() - t) / 1000);
    out.worker_idle_round_trips_per_second = +idlePerSecond.toFixed(1);

    for (const request of requests) {
      const refs = Array.from({ length: n }, (_, i) => `rt-${request.name}-${process.pid}-${i}`);
      const redis0 = await redisCommands();
      apiProxy.roundTrips = 0;
      workerProxy.roundTrips = 0;
      t = performance.now();
      for (const ref of refs) await send(request, ref);
      const counted: Record<string, unknown> = { api: +(apiProxy.roundTrips / n).toFixed(2) };
      if (request.calledBack) {
        await receiver.waitFor(refs);
        const seconds = (performance.now() - t) / 1000;
        counted.worker_until_called_back = +((workerProxy.roundTrips - idlePerSecond * seconds) / n).toFixed(2);
      }
      counted.redis_commands_all_processes = +(((await redisCommands()) - redis0) / n).toFixed(1);

      // One more, traced.
      await sleep(500);
      apiProxy.trace = [];
      workerProxy.trace = [];
      const traced = `rt-trace-${request.name}-${process.pid}`;
      await send(request, traced);
      counted.trace_api = apiProxy.trace;
      if (request.calledBack) {
        await receiver.waitFor([traced]);
        await sleep(300);
        counted.trace_worker = withoutRelayPolls(workerProxy.trace);
      }
      apiProxy.trace = null;
      workerProxy.trace = null;
      out[request.name] = counted;
    }
    return out;
  } finally {
    await stopChild(api);
    await stopChild(worker);
    await apiProxy.close();
    await workerProxy.close();
  }
}
