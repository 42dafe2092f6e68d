import { Agent, request as httpRequest } from 'node:http';

/** One request of an open-loop run: where it goes and what it carries. */
export interface PacedRequest {
  base: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface OpenLoopRun {
  /** performance.now() when the schedule began: request i was due at start + i / rate seconds. */
  start: number;
  sent: number;
  /** performance.now() each request was sent. */
  sentAt: number[];
  /** Milliseconds from sent to the whole answer read; NaN for a request that failed (connection error, time-out). */
  responseMs: number[];
  /** HTTP status per request; 0 for one that failed. */
  status: number[];
  statuses: Record<string, number>;
  errors: number;
  /** Seconds from the start until the last answer (or failure). */
  seconds: number;
  /** Seconds from the start until the last request was sent: above `seconds` of the schedule, the sender fell behind. */
  sendSeconds: number;
}

/**
 * An open-loop generator: the i-th request is sent at i/rate seconds whatever the answers, so a slow server
 * cannot slow the arrivals down (no coordinated omission). Keep-alive connections, up to 512 per API.
 */
export async function openLoop(rate: number, seconds: number, request: (i: number) => PacedRequest): Promise<OpenLoopRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const urls = new Map<string, URL>();
  const total = Math.round(rate * seconds);
  const sentAt: number[] = new Array(total);
  const responseMs: number[] = new Array(total).fill(NaN);
  const status: number[] = new Array(total).fill(0);
  const statuses: Record<string, number> = {};
  let errors = 0;
  let lastSent = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    if (total === 0) return resolve();
    let sent = 0;
    let finished = 0;
    const fire = (i: number) => {
      const r = request(i);
      let url = urls.get(r.base);
      if (!url) urls.set(r.base, (url = new URL(r.base)));
      const t = performance.now();
      sentAt[i] = t;
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: r.path,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body), ...r.headers },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            responseMs[i] = performance.now() - t;
            status[i] = res.statusCode!;
            statuses[res.statusCode!] = (statuses[res.statusCode!] ?? 0) + 1;
            if (++finished === total) resolve();
          });
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        errors++;
        if (++finished === total) resolve();
      });
      req.end(r.body);
    };
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      while (sent < due) fire(sent++);
      if (sent >= total) {
        lastSent = performance.now();
        clearInterval(timer);
      }
    }, 1);
  });
  const end = performance.now();
  agent.destroy();
  return {
    start,
    sent: total,
    sentAt,
    responseMs,
    status,
    statuses,
    errors,
    seconds: (end - start) / 1000,
    sendSeconds: ((total === 0 ? start : lastSent) - start) / 1000,
  };
}

/** A rate rounded to a step: tens below 500/s, fifties above, never under 10. */
export function roundRate(rate: number): number {
  return Math.max(10, rate < 500 ? Math.floor(rate / 10) * 10 : Math.floor(rate / 50) * 50);
}

/**
 * Looks for the highest rate a run holds: runs at `start`, then ×1.25 while every run so far held (when `canGoUp`,
 * up to `max`), or ×0.8 while none has; stops at the first rate that changes the answer, or after `attempts` runs.
 */
export async function stepRates<T>(options: {
  start: number;
  canGoUp: boolean;
  max?: number;
  attempts: number;
  run: (rate: number, attempt: number) => Promise<T>;
  held: (result: T) => boolean;
}): Promise<{ tried: Array<{ rate: number; held: boolean; result: T }>; best: { rate: number; held: boolean; result: T } | null }> {
  const tried: Array<{ rate: number; held: boolean; result: T }> = [];
  let rate = options.start;
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    const result = await options.run(rate, attempt);
    const held = options.held(result);
    tried.push({ rate, held, result });
    const anyFailed = tried.some((t) => !t.held);
    const anyHeld = tried.some((t) => t.held);
    const next =
      held && options.canGoUp && !anyFailed
        ? roundRate(Math.min(options.max ?? Infinity, rate * 1.25)) // try higher
        : !held && !anyHeld
          ? roundRate(rate * 0.8) // try lower
          : rate;
    if (next === rate) break;
    rate = next;
  }
  const best = tried.filter((t) => t.held).sort((a, b) => b.rate - a.rate)[0] ?? null;
  return { tried, best };
}
