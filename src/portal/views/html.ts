import { displayAmount } from '../../common/money';

/** Text escaped for HTML element content and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const TIME_FORMATS = new Map<string, Intl.DateTimeFormat>();

/** A time as people read it in a table, in the merchant's time zone (2026-11-22 17:03:09); the page names the zone. */
export function when(value: Date | string | null, timeZone: string): string {
  if (!value) return '—';
  let format = TIME_FORMATS.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    TIME_FORMATS.set(timeZone, format);
  }
  const part = Object.fromEntries(format.formatToParts(new Date(value)).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second}`;
}

/** An amount in its currency's minor units with separators ("KES 1,000,750.00"); tables right-align it. */
export function money(value: string | null, currency: string): string {
  if (value === null) return '<span class="muted">—</span>';
  return `<span class="cur">${esc(currency)}</span>&nbsp;${esc(displayAmount(value, currency))}`;
}

/** The hidden CSRF field every form of a signed-in page carries. */
export function csrfField(token: string): string {
  return `<input type="hidden" name="_csrf" value="${esc(token)}">`;
}

/** A POST form holding one button (revoke, resend, rotate, sign out); `name` is its accessible name when the label is short. */
export function buttonForm(action: string, csrfToken: string, label: string, className = 'secondary', name?: string): string {
  const aria = name ? ` aria-label="${esc(name)}"` : '';
  return `<form method="post" action="${esc(action)}" class="inline">${csrfField(csrfToken)}<button type="submit" class="${className}"${aria}>${esc(label)}</button></form>`;
}

/** A table column: its heading, and whether it holds amounts (right-aligned, figures aligned). */
export type Column = string | { label: string; amount: true };

/**
 * A table. On a wide screen its cells wrap rather than push it wider than the page; on a phone each row becomes a
 * card of label and value pairs (every cell carries its column's label), so nothing is hidden sideways.
 */
export function table(caption: string, columns: Column[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
  const heads = columns.map((c) => (typeof c === 'string' ? { label: c, amount: false } : c));
  // One element per cell, so that a card lays out exactly its label and its value.
  const cell = (content: string, i: number) =>
    `<td data-label="${esc(heads[i].label)}"${heads[i].amount ? ' class="num"' : ''}><span>${content}</span></td>`;
  return `<div class="table-wrap"><table>
<caption>${esc(caption)}</caption>
<thead><tr>${heads.map((h) => `<th scope="col"${h.amount ? ' class="num"' : ''}>${esc(h.label)}</th>`).join('')}</tr></thead>
<tbody>${rows.map((cells) => `<tr>${cells.map(cell).join('')}</tr>`).join('\n')}</tbody>
</table></div>`;
}

const STYLE = `
*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#111}
a{color:#0b57d0}a:hover{color:#083e94}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:2}.skip:focus{left:.5rem}
header{background:#10213f;color:#fff}header .bar{max-width:72rem;margin:0 auto;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header .brand{font-weight:700;color:#fff;text-decoration:none;margin-right:auto}
header nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem}
header nav a{color:#fff;text-decoration:none;padding:.35rem .6rem;border-radius:6px;display:inline-block}
header nav a[aria-current=page]{background:#fff;color:#10213f;font-weight:700}header nav a:hover{text-decoration:underline}
header .who{font-size:.9rem;display:flex;gap:.5rem;align-items:center}
main{max-width:72rem;margin:0 auto;padding:1.25rem 1rem 3rem}
h1{font-size:1.5rem;margin:.25rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
.card{background:#fff;border:1px solid #c9ced6;border-radius:10px;padding:1rem 1.25rem;margin:0 0 1rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:1rem}
.figure{font-size:1.4rem;font-weight:700;margin:.1rem 0}.muted{color:#4a5260}.small{font-size:.9rem}
label{display:block;font-weight:600;margin:.6rem 0 .2rem}
input,select{font:inherit;padding:.5rem .6rem;border:2px solid #59616d;border-radius:6px;background:#fff;color:#111;max-width:100%}
input[type=url],input[type=text],input[type=password]{width:100%}
button{font:inherit;font-weight:600;padding:.5rem 1rem;border:2px solid #0b57d0;border-radius:6px;background:#0b57d0;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#0b57d0}button.danger{background:#fff;color:#a50e0e;border-color:#a50e0e}
header button.secondary{padding:.25rem .6rem}
a:focus,button:focus,input:focus,select:focus,[tabindex]:focus,summary:focus{outline:3px solid #f4b400;outline-offset:2px}
.inline{display:inline}.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:.75rem;align-items:center}
.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end}.filters label{margin:0 0 .2rem}
.notice{padding:.75rem 1rem;border-radius:8px;margin:0 0 1rem;border:1px solid}
.notice.ok{background:#e6f4ea;color:#0d4a1f;border-color:#8cc79b}.notice.err{background:#fce8e6;color:#7a1010;border-color:#e3a19b}
.secret{font-family:ui-monospace,Menlo,Consolas,monospace;background:#fff8e1;border:1px dashed #8a6d00;padding:.5rem;word-break:break-all;display:block}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;overflow-wrap:anywhere}
pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85rem;background:#f6f8fa;border:1px solid #e1e4e8;border-radius:6px;padding:.6rem;margin:.25rem 0;white-space:pre-wrap;word-break:break-all;max-height:24rem;overflow:auto}
.table-wrap{background:#fff;border:1px solid #c9ced6;border-radius:10px}
table{border-collapse:collapse;width:100%;font-size:.95rem}caption{text-align:left;padding:.6rem .75rem;font-weight:700}
th,td{padding:.5rem .75rem;border-top:1px solid #e1e4e8;text-align:left;vertical-align:top;overflow-wrap:break-word}
th.num,td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}.cur{color:#4a5260;font-size:.85em}
.status{font-weight:700}.status.s-ok{color:#0d5c24}.status.s-err{color:#a50e0e}.status.s-wait{color:#7a4d00}
.pager{margin-top:1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}.empty{background:#fff;border:1px dashed #c9ced6;border-radius:10px;padding:1rem}
.card>h2:first-child{margin-top:0}dl.facts{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.35rem 1rem;margin:0}dl.facts dt{font-weight:600;color:#4a5260}dl.facts dd{margin:0;overflow-wrap:anywhere}
.chart svg{width:100%;height:auto;display:block}.chart p{margin:0;font-size:.8rem;color:#4a5260}.chart-days{display:flex;justify-content:space-between}.tabs{display:flex;gap:.5rem;flex-wrap:wrap;margin:0 0 1rem}
.tabs a{padding:.3rem .8rem;border:2px solid #0b57d0;border-radius:999px;text-decoration:none}.tabs a[aria-current=page]{background:#0b57d0;color:#fff}
details{margin:.25rem 0}summary{cursor:pointer;color:#0b57d0}
.login{max-width:24rem;margin:3rem auto}.login button{width:100%;margin-top:1rem;padding:.75rem}
@media (max-width:48rem){h1{font-size:1.3rem}header .bar{padding:.5rem .75rem}main{padding:1rem .75rem 2rem}
.table-wrap{background:none;border:0}table,tbody,tr,td{display:block;width:100%}thead{position:absolute;left:-9999px}
caption{display:block;padding:0 0 .5rem}tr{background:#fff;border:1px solid #c9ced6;border-radius:10px;margin:0 0 .75rem;padding:.35rem .75rem}
td,td.num{display:flex;justify-content:space-between;gap:1rem;border:0;padding:.3rem 0;text-align:right;white-space:normal}
td::before{content:attr(data-label);font-weight:600;color:#4a5260;text-align:left;flex:none}
dl.facts{grid-template-columns:1fr}dl.facts dd{margin:0 0 .4rem}}
`;

export interface PageFrame {
  nonce: string;
  title: string;
  /** The signed-in user: navigation, sign-out and the client's name; absent on the sign-in and error pages. */
  user?: { username: string; clientName: string; csrfToken: string; timeZone: string };
  /** Which navigation entry is the current page. */
  active?: string;
  notice?: { kind: 'ok' | 'err'; text: string } | null;
}

const NAV: Array<[string, string]> = [
  ['/portal', 'Overview'],
  ['/portal/payments', 'Payments'],
  ['/portal/payouts', 'Payouts'],
  ['/portal/deliveries', 'Deliveries'],
  ['/portal/reconciliation', 'Reconciliation'],
  ['/portal/statements', 'Statements'],
  ['/portal/api-keys', 'API keys'],
  ['/portal/callbacks', 'Callbacks'],
];

/** The portal's page: landmarks, a skip link, navigation and sign-out; styles inline under the response's CSP nonce. */
export function layout(frame: PageFrame, body: string): string {
  const { user } = frame;
  const nav = user
    ? `<nav aria-label="Portal"><ul>${NAV.map(([href, label]) => `<li><a href="${href}"${frame.active === href ? ' aria-current="page"' : ''}>${label}</a></li>`).join('')}</ul></nav>
<div class="who"><span>${esc(user.username)} · ${esc(user.clientName)} · <abbr title="Times and days are in this time zone">${esc(user.timeZone)}</abbr></span>${buttonForm('/portal/logout', user.csrfToken, 'Sign out')}</div>`
    : '';
  const notice = frame.notice
    ? `<p class="notice ${frame.notice.kind}" role="${frame.notice.kind === 'err' ? 'alert' : 'status'}">${esc(frame.notice.text)}</p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><link rel="icon" href="data:,"><title>${esc(frame.title)} · Merchant portal</title><style nonce="${frame.nonce}">${STYLE}</style></head>
<body><a class="skip" href="#content">Skip to content</a>
<header><div class="bar"><a class="brand" href="/portal">Merchant portal</a>${nav}</div></header>
<main id="content" tabindex="-1"><h1>${esc(frame.title)}</h1>${notice}${body}</main></body></html>`;
}
