/** Text escaped for HTML element content and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A UTC time as people read it in a table (2026-11-22 14:03:09 UTC). */
export function when(value: Date | string | null): string {
  if (!value) return '—';
  return `${new Date(value).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** The hidden CSRF field every form of a signed-in page carries. */
export function csrfField(token: string): string {
  return `<input type="hidden" name="_csrf" value="${esc(token)}">`;
}

/** A POST form holding one button (revoke, resend, rotate, sign out). */
export function buttonForm(action: string, csrfToken: string, label: string, className = 'secondary'): string {
  return `<form method="post" action="${esc(action)}" class="inline">${csrfField(csrfToken)}<button type="submit" class="${className}">${esc(label)}</button></form>`;
}

/** A table that scrolls sideways on narrow screens (a focusable, labelled region, so keyboards can scroll it). */
export function table(caption: string, headers: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
  return `<div class="table-wrap" role="region" aria-label="${esc(caption)}" tabindex="0"><table>
<caption>${esc(caption)}</caption>
<thead><tr>${headers.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.map((cells) => `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n')}</tbody>
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
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;word-break:break-all}
.table-wrap{overflow-x:auto;background:#fff;border:1px solid #c9ced6;border-radius:10px}
table{border-collapse:collapse;width:100%;font-size:.95rem}caption{text-align:left;padding:.6rem .75rem;font-weight:700}
th,td{padding:.5rem .75rem;border-top:1px solid #e1e4e8;text-align:left;vertical-align:top;white-space:nowrap}
td.wrap{white-space:normal}.status{font-weight:700}.status.s-ok{color:#0d5c24}.status.s-err{color:#a50e0e}.status.s-wait{color:#7a4d00}
.pager{margin-top:1rem}.empty{background:#fff;border:1px dashed #c9ced6;border-radius:10px;padding:1rem}
details{margin:.25rem 0}summary{cursor:pointer;color:#0b57d0}
.login{max-width:24rem;margin:3rem auto}.login button{width:100%;margin-top:1rem;padding:.75rem}
@media (max-width:40rem){h1{font-size:1.3rem}header .bar{padding:.5rem .75rem}main{padding:1rem .75rem 2rem}}
`;

export interface PageFrame {
  nonce: string;
  title: string;
  /** The signed-in user: navigation, sign-out and the client's name; absent on the sign-in and error pages. */
  user?: { username: string; clientName: string; csrfToken: string };
  /** Which navigation entry is the current page. */
  active?: string;
  notice?: { kind: 'ok' | 'err'; text: string } | null;
}

const NAV: Array<[string, string]> = [
  ['/portal', 'Overview'],
  ['/portal/api-keys', 'API keys'],
  ['/portal/callbacks', 'Callbacks'],
  ['/portal/payments', 'Payments'],
  ['/portal/payouts', 'Payouts'],
  ['/portal/deliveries', 'Deliveries'],
];

/** The portal's page: landmarks, a skip link, navigation and sign-out; styles inline under the response's CSP nonce. */
export function layout(frame: PageFrame, body: string): string {
  const { user } = frame;
  const nav = user
    ? `<nav aria-label="Portal"><ul>${NAV.map(([href, label]) => `<li><a href="${href}"${frame.active === href ? ' aria-current="page"' : ''}>${label}</a></li>`).join('')}</ul></nav>
<div class="who"><span>${esc(user.username)} · ${esc(user.clientName)}</span>${buttonForm('/portal/logout', user.csrfToken, 'Sign out')}</div>`
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
