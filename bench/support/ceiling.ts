/** The reference ceiling run in the same sitting, and every figure's ratio to it. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONNECTIONS, DURATION, freePort, log, ROOT } from './environment';

/** What the reference ceiling measured on this machine, in transfers/s (its last output line). */
export interface CeilingFigures {
  sql_random: number;
  sql_hot: number;
  sql_batch10_random: number;
  sql_batch10_hot: number;
  http_random: number;
  http_hot: number;
}

export type Ceiling =
  | ({ skipped: false; script: string; seconds: number; connections: number; wall_seconds: number } & CeilingFigures)
  | { skipped: true; reason: string };

/**
 * The ceiling script: BENCH_CEILING when set, else ../shared/bench/ceiling/run.sh beside the project, else
 * /work/shared/bench/ceiling/run.sh (worktrees live elsewhere). BENCH_CEILING=skip, or no script there, skips it.
 */
function ceilingScript(): { script: string } | { reason: string } {
  const configured = process.env.BENCH_CEILING;
  if (configured === 'skip') return { reason: 'BENCH_CEILING=skip' };
  const candidates = configured
    ? [configured]
    : [join(ROOT, '..', 'shared', 'bench', 'ceiling', 'run.sh'), '/work/shared/bench/ceiling/run.sh'];
  const script = candidates.find((c) => existsSync(c));
  return script ? { script } : { reason: `no ceiling script at ${candidates.join(' or ')}` };
}

/**
 * Runs the reference ceiling (a lean SQL transfer under pgbench, and behind a bare Fastify + pg server under
 * autocannon) with the bench's seconds and connections, before the bench's own load, so its figures and the
 * bench's come from the same machine in the same state. Its output is passed through; a failed or skipped run
 * is reported as such and the bench goes on without ratios.
 */
export async function runCeiling(seconds = DURATION, connections = CONNECTIONS): Promise<Ceiling> {
  const found = ceilingScript();
  if ('reason' in found) {
    log(`reference ceiling skipped: ${found.reason}; figures are printed without ratios`);
    return { skipped: true, reason: found.reason };
  }
  log(`reference ceiling: ${found.script} ${ROOT} ${seconds} ${connections} (about ${6 * seconds + 10} s)`);
  const t0 = Date.now();
  const child = spawn('bash', [found.script, ROOT, String(seconds), String(connections)], {
    // A port of its own: its default (3990) may be taken by another bench on the machine.
    env: { ...process.env, CEILING_PORT: String(await freePort()) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let pending = '';
  let last = null as string | null; // the last JSON line: every figure
  const take = (line: string) => {
    console.log(`[ceiling] ${line}`);
    if (line.trim().startsWith('{')) last = line;
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop()!;
    lines.forEach(take);
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (pending) take(pending);
  if (code !== 0 || !last) {
    const reason = `the ceiling exited with code ${code}${last ? '' : ' and printed no JSON line'}`;
    log(`reference ceiling failed: ${reason}; figures are printed without ratios`);
    return { skipped: true, reason };
  }
  const figures = JSON.parse(last) as CeilingFigures;
  return { skipped: false, script: found.script, seconds, connections, wall_seconds: (Date.now() - t0) / 1000, ...figures };
}

/** The ceiling a figure is compared with: transfers between random accounts, or through one hot account. */
export type CeilingKind = 'http_random' | 'http_hot';

/** Issues 10's and 20's targets, as multiples of the same-run ceiling (at 32 connections). */
export const CEILING_TARGETS = {
  transfersRandom: { ratio: 1.0, p99_ms: 50 },
  transfersHot: { ratio: 1.5 },
  credits: { ratio: 1.0 },
  charges: { ratio: 1.0 },
  checkouts: { ratio: 1.0 },
  settlementAndCallback: { ratio: 0.5 },
  /** Payouts and airtime recipients reaching their final status and called back (issue 20). */
  payoutsFinalAndCalledBack: { ratio: 0.5 },
  /** Payouts accepted through one merchant's float, against http_hot (issue 20). */
  payoutsAcceptedHot: { ratio: 1.5 },
  /** bench:mixed, the highest rate held (issue 20). */
  mixedHeld: { ratio: 0.5 },
} as const;

export interface Throughput {
  label: string;
  /** Per second; null when the phase produced no rate (e.g. no sustained end-to-end rate). */
  per_second: number | null;
  ceiling: CeilingKind;
  p99_ms?: number;
  target?: { ratio: number; p99_ms?: number };
}

function withinP99(f: Throughput): boolean {
  return f.target?.p99_ms === undefined || (f.p99_ms !== undefined && f.p99_ms <= f.target.p99_ms);
}

/**
 * Prints every throughput beside its ratio to the relevant ceiling, and met/missed for those with a target; the
 * rows go into the report (BENCH_RESULTS) as `against_ceiling`.
 */
export function printAgainstCeiling(report: Record<string, unknown>, figures: Throughput[]): void {
  const ceiling = report.ceiling as Ceiling | undefined;
  const rows = figures.map((f) => {
    const reference = ceiling && !ceiling.skipped ? ceiling[f.ceiling] : null;
    const ratio = reference && f.per_second !== null ? +(f.per_second / reference).toFixed(2) : null;
    // No rate (e.g. no sustained end-to-end rate) misses its target; without a ceiling nothing is judged.
    const met = !f.target || !reference ? null : f.per_second !== null && f.per_second >= f.target.ratio * reference && withinP99(f);
    return { ...f, ceiling_per_second: reference, ratio, met };
  });
  report.against_ceiling = rows;
  console.log(
    ceiling && !ceiling.skipped
      ? `against the reference ceiling of this sitting (${ceiling.seconds} s, ${ceiling.connections} connections): http random ${ceiling.http_random}/s, http hot ${ceiling.http_hot}/s; sql random ${ceiling.sql_random}/s, hot ${ceiling.sql_hot}/s, batch of 10 random ${ceiling.sql_batch10_random}/s, hot ${ceiling.sql_batch10_hot}/s`
      : `no reference ceiling (${ceiling?.skipped ? ceiling.reason : 'not run'}): no ratios, targets not judged`,
  );
  for (const r of rows) {
    const rate = r.per_second === null ? 'none' : `${r.per_second}/s`;
    const ratio = r.ratio === null ? '' : `  ${r.ratio.toFixed(2)}× ${r.ceiling}`;
    const target = r.target
      ? `  target ≥ ${r.target.ratio.toFixed(1)}×${r.target.p99_ms !== undefined ? ` with p99 ≤ ${r.target.p99_ms} ms (p99 ${r.p99_ms ?? '?'} ms)` : ''}: ${r.met === null ? 'not judged' : r.met ? 'met' : 'MISSED'}`
      : '';
    console.log(`  ${r.label.padEnd(48)} ${rate.padStart(9)}${ratio}${target}`);
  }
}
