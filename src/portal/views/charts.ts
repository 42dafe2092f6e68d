import { esc } from './html';

/** One bar: its day (YYYY-MM-DD), its height's value, and what its tooltip says. */
export interface Bar {
  day: string;
  value: number;
  label: string;
}

const WIDTH = 600;
const HEIGHT = 160;
const AXIS = 18;

/**
 * A bar chart as inline SVG (no script, no external asset, colours as presentation attributes since the page's
 * CSP allows no inline style attributes): one bar per day, each with a tooltip, the first, middle and last days
 * written under the axis, and the largest value above it. It scales with its box; the figures are also in the
 * table that follows it.
 */
export function barChart(title: string, bars: Bar[], largest: string): string {
  const max = Math.max(0, ...bars.map((b) => b.value));
  const slot = WIDTH / Math.max(bars.length, 1);
  const plot = HEIGHT - AXIS;
  const marks = new Set([0, Math.floor((bars.length - 1) / 2), bars.length - 1]);
  const shapes = bars
    .map((b, i) => {
      const h = max > 0 ? Math.max((b.value / max) * (plot - 14), b.value > 0 ? 2 : 0) : 0;
      const x = (i * slot + slot * 0.15).toFixed(1);
      const bar = `<rect x="${x}" y="${(plot - h).toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${h.toFixed(1)}" fill="#0b57d0"><title>${esc(b.day)}: ${esc(b.label)}</title></rect>`;
      const tick = marks.has(i)
        ? `<text x="${(i * slot + slot / 2).toFixed(1)}" y="${HEIGHT - 4}" font-size="11" text-anchor="middle" fill="#4a5260">${esc(b.day.slice(5))}</text>`
        : '';
      return bar + tick;
    })
    .join('');
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${esc(title)}" xmlns="http://www.w3.org/2000/svg">
<line x1="0" y1="${plot}" x2="${WIDTH}" y2="${plot}" stroke="#c9ced6"/>
<text x="0" y="11" font-size="11" fill="#4a5260">${esc(max > 0 ? `max ${largest}` : 'none')}</text>${shapes}</svg>`;
}
