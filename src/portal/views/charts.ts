import { esc } from './html';

/** One bar: its day (YYYY-MM-DD), its height's value, and what its tooltip says. */
export interface Bar {
  day: string;
  value: number;
  label: string;
}

const WIDTH = 600;
const HEIGHT = 130;

/**
 * A bar chart: the bars as inline SVG (no script, no external asset, colours as presentation attributes since the
 * page's CSP allows no inline style attributes), one per day, each with a tooltip, scaling with its box; its words
 * as HTML around it (the largest value above, the first, middle and last days below), so that they keep the page's
 * text size on a phone where SVG text would shrink with the bars. The figures are also in the table that follows it.
 */
export function barChart(title: string, bars: Bar[], largest: string): string {
  const max = Math.max(0, ...bars.map((b) => b.value));
  const slot = WIDTH / Math.max(bars.length, 1);
  const shapes = bars
    .map((b, i) => {
      const h = max > 0 ? Math.max((b.value / max) * HEIGHT, b.value > 0 ? 2 : 0) : 0;
      const x = (i * slot + slot * 0.15).toFixed(1);
      return `<rect x="${x}" y="${(HEIGHT - h).toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${h.toFixed(1)}" fill="#0b57d0"><title>${esc(b.day)}: ${esc(b.label)}</title></rect>`;
    })
    .join('');
  const marks = [...new Set([0, Math.floor((bars.length - 1) / 2), bars.length - 1])].filter((i) => bars[i]);
  const days = marks.map((i) => `<span>${esc(bars[i].day.slice(5))}</span>`).join('');
  return `<div class="chart"><p class="chart-top">${esc(max > 0 ? `max ${largest}` : 'none')}</p>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${esc(title)}" xmlns="http://www.w3.org/2000/svg">
<line x1="0" y1="${HEIGHT}" x2="${WIDTH}" y2="${HEIGHT}" stroke="#c9ced6"/>${shapes}</svg>
<p class="chart-days">${days}</p></div>`;
}
