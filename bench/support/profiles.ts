import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Self time of a process by package (or Node internals), from the V8 CPU profile it wrote at exit. */
export function summariseProfile(dir: string, label = 'server_profile') {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return { error: `no profile in ${dir}` };
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)!.callFrame;
    const url = frame.url;
    const pkg = url.includes('node_modules/')
      ? url
          .split('node_modules/')
          .pop()!
          .split('/')
          .slice(0, url.split('node_modules/').pop()!.startsWith('@') ? 2 : 1)
          .join('/')
      : url.includes('/dist/src/')
        ? `app: ${url.split('/dist/src/')[1].split('/')[0]}`
        : url.startsWith('node:')
          ? 'node internals'
          : frame.functionName === '(idle)' || frame.functionName === '(program)' || frame.functionName === '(garbage collector)'
            ? frame.functionName
            : url || '(native)';
    if (frame.functionName === '(idle)') return;
    total += us;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${frame.lineNumber}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  });
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => ({ name: k, percent: +((v / total) * 100).toFixed(1) }));
  const summary = { busy_seconds: +(total / 1e6).toFixed(1), by_package: top(byPackage, 20), by_function: top(byFunction, 20) };
  console.log(JSON.stringify({ [label]: summary }, null, 2));
  return summary;
}
