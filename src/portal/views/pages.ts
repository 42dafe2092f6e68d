import type { ApiKeySummary } from '../../auth/gateway/api-keys.service';
import type { CallbackKind } from '../../callbacks/settings/callback-settings.service';
import type { DeliveryView } from '../../callbacks/delivery/callbacks.service';
import type { DayTotals, ListFilter } from '../../common/listing';
import type { FloatBalance } from '../../float/float-balance.service';
import type { PaymentListRow } from '../../collections/payments.repository';
import type { PayoutListRow } from '../../payouts/payouts.repository';
import { buttonForm, csrfField, esc, layout, PageFrame, table, when } from './html';

export const PAYMENT_STATUS_NAMES: Record<string, string> = {
  700: 'Successful',
  701: 'Failed',
  702: 'Reversed',
  703: 'Pending',
  704: 'Jammed',
};
export const PAYOUT_STATUS_NAMES: Record<string, string> = { ...PAYMENT_STATUS_NAMES, 705: 'Refunded' };
export const DELIVERY_STATUS_NAMES: Record<string, string> = { PENDING: 'Pending', DELIVERED: 'Delivered', FAILED: 'Failed' };

const KIND_TITLES: Record<CallbackKind, string> = { collections: 'Collections', payouts: 'Payouts', airtime: 'Airtime' };

function statusCell(code: string | number, names: Record<string, string>): string {
  const c = String(code);
  const tone = ['700', 'DELIVERED'].includes(c) ? 's-ok' : ['701', '702', '704', 'FAILED'].includes(c) ? 's-err' : 's-wait';
  return `<span class="status ${tone}">${esc(names[c] ?? c)}</span>${/^\d+$/.test(c) ? ` <span class="muted small">${c}</span>` : ''}`;
}

export function signInPage(nonce: string, options: { error?: string; username?: string } = {}): string {
  return layout(
    { nonce, title: 'Sign in', notice: options.error ? { kind: 'err', text: options.error } : null },
    `<div class="card login"><form method="post" action="/portal/login">
<label for="username">Username</label><input id="username" name="username" type="text" autocomplete="username" required value="${esc(options.username)}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>
<p class="muted small">Sign in with your wallet-service user.</p></div>`,
  );
}

export function messagePage(nonce: string, title: string, message: string, signedIn: boolean): string {
  const back = signedIn ? '<a href="/portal">Back to the overview</a>' : '<a href="/portal/login">Go to sign-in</a>';
  return layout({ nonce, title }, `<div class="card" role="alert"><p>${esc(message)}</p><p>${back}</p></div>`);
}

function totalsCard(title: string, totals: DayTotals[]): string {
  const body =
    totals.length === 0
      ? '<p class="muted">None yet today.</p>'
      : totals
          .map(
            (t) => `<p class="figure">${esc(t.currency)} ${esc(t.successful_amount)}</p>
<p class="muted">${t.successful} successful of ${t.count}</p>`,
          )
          .join('');
  return `<section class="card" aria-labelledby="h-${esc(title)}"><h2 id="h-${esc(title)}">${esc(title)}</h2>${body}</section>`;
}

export function overviewPage(
  frame: PageFrame,
  view: { floats: Array<FloatBalance & { account_number: string }>; collections: DayTotals[]; payouts: DayTotals[] },
): string {
  const floats = table(
    'Float and settlement balances',
    ['Account', 'Currency', 'Available', 'Reserved', 'Total', 'Status'],
    view.floats.map((f) => [
      `<code>${esc(f.account_number)}</code>`,
      esc(f.currency),
      esc(f.balance),
      esc(f.reserved_balance),
      esc(f.ledger_balance),
      esc(f.status),
    ]),
    'No settlement wallet is linked to a client service yet.',
  );
  return layout(
    frame,
    `<h2>Balances</h2><p class="muted small">Available is what new payouts can use; reserved is held for payouts and airtime in flight.</p>${floats}
<h2>Today (UTC)</h2><div class="grid">${totalsCard('Collections', view.collections)}${totalsCard('Payouts', view.payouts)}</div>`,
  );
}

export function apiKeysPage(
  frame: PageFrame & { user: NonNullable<PageFrame['user']> },
  keys: ApiKeySummary[],
  created?: { consumer_key: string; consumer_secret: string },
): string {
  const shown = created
    ? `<section class="card" aria-labelledby="h-new"><h2 id="h-new">New key</h2>
<p>Copy the secret now: it is shown only once and cannot be recovered.</p>
<p><strong>Consumer key</strong> <code id="new-consumer-key" class="secret">${esc(created.consumer_key)}</code></p>
<p><strong>Consumer secret</strong> <code id="new-consumer-secret" class="secret">${esc(created.consumer_secret)}</code></p></section>`
    : '';
  const live = keys.filter((k) => !k.revoked_at).length;
  const rows = keys.map((k) => [
    `<code>${esc(k.consumer_key)}</code>`,
    when(k.created_at),
    when(k.last_authenticated_at),
    k.revoked_at ? `Revoked ${esc(when(k.revoked_at))}` : 'Live',
    k.revoked_at
      ? ''
      : buttonForm(
          `/portal/api-keys/${encodeURIComponent(k.consumer_key)}/revoke`,
          frame.user.csrfToken,
          `Revoke ${k.consumer_key}`,
          'danger',
        ),
  ]);
  return layout(
    frame,
    `${shown}<p>Keys obtain gateway tokens at <code>POST /v1/auth</code>. Keep several live keys to rotate: create the new key,
deploy it, then revoke the old one (its tokens stop working at once).</p>
<form method="post" action="/portal/api-keys">${csrfField(frame.user.csrfToken)}<button type="submit">Create a key</button></form>
<h2>Your keys <span class="muted small">(${live} live)</span></h2>
${table('API keys', ['Consumer key', 'Created', 'Last token', 'State', 'Action'], rows, 'No keys yet.')}`,
  );
}

export interface CallbackSettingsView {
  kind: CallbackKind;
  url: string | null;
  username: string | null;
  hasPassword: boolean;
}

export function callbacksPage(
  frame: PageFrame & { user: NonNullable<PageFrame['user']> },
  view: { endpoints: CallbackSettingsView[]; rotatedAt: Date; previousValidUntil: Date | null; newSecret?: string; overlapHours: number },
): string {
  const forms = view.endpoints
    .map((e) => {
      const id = (field: string) => `${e.kind}-${field}`;
      return `<section class="card" aria-labelledby="${id('h')}"><h2 id="${id('h')}">${KIND_TITLES[e.kind]} callbacks</h2>
<form method="post" action="/portal/callbacks/${e.kind}">${csrfField(frame.user.csrfToken)}
<label for="${id('url')}">Callback URL</label>
<input id="${id('url')}" name="url" type="url" required placeholder="https://example.com/callbacks" value="${esc(e.url)}">
<label for="${id('username')}">Basic-auth username <span class="muted small">(optional)</span></label>
<input id="${id('username')}" name="username" type="text" autocomplete="off" value="${esc(e.username)}">
<label for="${id('password')}">Basic-auth password</label>
<input id="${id('password')}" name="password" type="password" autocomplete="new-password" aria-describedby="${id('password-hint')}">
<p class="muted small" id="${id('password-hint')}">${e.hasPassword ? 'A password is stored; it is never shown. Leave empty to keep it.' : 'No password stored.'}</p>
<div class="actions"><button type="submit">Save ${KIND_TITLES[e.kind].toLowerCase()} callbacks</button></div></form></section>`;
    })
    .join('\n');
  const newSecret = view.newSecret
    ? `<p class="notice ok" role="status">New signing secret (shown once): <code id="new-signing-secret" class="secret">${esc(view.newSecret)}</code></p>`
    : '';
  const overlap = view.previousValidUntil
    ? `<p>The previous secret stays valid until <strong>${esc(when(view.previousValidUntil))}</strong>: until then callbacks carry both signatures
(<code>X-Signature: t=…,v1=&lt;new&gt;,v1=&lt;previous&gt;</code>).</p>`
    : '';
  return layout(
    frame,
    `<div class="grid">${forms}</div>
<section class="card" aria-labelledby="h-secret"><h2 id="h-secret">Signing secret</h2>${newSecret}
<p>Every callback is signed: <code>X-Signature: t=&lt;unix seconds&gt;,v1=&lt;HMAC-SHA256(secret, "t.body")&gt;</code>. Last rotated ${esc(when(view.rotatedAt))}.</p>${overlap}
<p class="muted small">Rotating issues a new secret; the current one stays valid for ${view.overlapHours} h so you can deploy the new one.</p>
${buttonForm('/portal/callbacks/signing-secret/rotate', frame.user.csrfToken, 'Rotate the signing secret', 'danger')}</section>`,
  );
}

export interface ListPageOptions {
  path: string;
  filter: ListFilter;
  statuses: Record<string, string>;
  next: string | null;
  referenceLabel: string;
  /** The list has a CSV export at `${path}.csv`. */
  csv?: boolean;
}

function filterForm(o: ListPageOptions): string {
  const f = o.filter;
  const options = [['', 'Any'], ...Object.entries(o.statuses)]
    .map(([value, label]) => `<option value="${esc(value)}"${f.status === value ? ' selected' : ''}>${esc(label)}</option>`)
    .join('');
  const query = new URLSearchParams(Object.entries(f).filter(([, v]) => v) as [string, string][]).toString();
  return `<form method="get" action="${o.path}" class="card filters" role="search" aria-label="Filter">
<div><label for="f-status">Status</label><select id="f-status" name="status">${options}</select></div>
<div><label for="f-from">From</label><input id="f-from" name="from" type="date" value="${esc(f.from)}"></div>
<div><label for="f-to">To</label><input id="f-to" name="to" type="date" value="${esc(f.to)}"></div>
<div><label for="f-reference">${esc(o.referenceLabel)} starts with</label><input id="f-reference" name="reference" type="text" value="${esc(f.reference)}"></div>
<div class="actions"><button type="submit">Filter</button><a href="${o.path}">Clear</a>
${o.csv ? `<a href="${o.path}.csv${query ? `?${esc(query)}` : ''}" download>Export CSV</a>` : ''}</div></form>`;
}

function pager(o: ListPageOptions): string {
  if (!o.next) return '';
  const query = new URLSearchParams({
    ...(Object.fromEntries(Object.entries(o.filter).filter(([, v]) => v)) as Record<string, string>),
    after: o.next,
  });
  return `<p class="pager"><a href="${o.path}?${esc(query.toString())}" rel="next">Older →</a></p>`;
}

export function paymentsPage(frame: PageFrame, rows: PaymentListRow[], o: ListPageOptions): string {
  const cells = rows.map((p) => [
    esc(p.id),
    when(p.created_at),
    `<code>${esc(p.external_reference)}</code>`,
    esc(p.payer_msisdn),
    `${esc(p.currency)} ${esc(p.amount)}`,
    esc(p.fee),
    statusCell(p.status, PAYMENT_STATUS_NAMES),
    `<span class="wrap">${esc(p.description)}</span>`,
  ]);
  return layout(
    frame,
    `${filterForm(o)}${table('Payments', ['ID', 'Created', 'Reference', 'Payer', 'Amount', 'Fee', 'Status', 'Description'], cells, 'No payments match.')}${pager(o)}`,
  );
}

export function payoutsPage(frame: PageFrame, rows: PayoutListRow[], o: ListPageOptions): string {
  const cells = rows.map((p) => [
    esc(p.id),
    when(p.created_at),
    `<code>${esc(p.payout_reference)}</code>`,
    esc(p.kind),
    `${esc(p.destination_type)} ${esc(p.recipient_account_number)}`,
    `${esc(p.currency)} ${esc(p.amount)}`,
    esc(p.fee),
    statusCell(p.status, PAYOUT_STATUS_NAMES),
  ]);
  return layout(
    frame,
    `${filterForm(o)}${table('Payouts', ['ID', 'Created', 'Reference', 'Kind', 'Recipient', 'Amount', 'Fee', 'Status'], cells, 'No payouts match.')}${pager(o)}`,
  );
}

function attemptsTable(d: DeliveryView): string {
  return table(
    `Attempts of ${d.id}`,
    ['#', 'Time', 'HTTP status', 'Latency', 'Error', 'Kind'],
    d.attempt_log.map((a) => [
      String(a.attempt),
      when(a.attempted_at),
      esc(a.http_status ?? '—'),
      `${a.latency_ms} ms`,
      esc(a.error ?? ''),
      a.replay ? 'Resend' : 'Scheduled',
    ]),
    'Not attempted yet.',
  );
}

function resendForm(d: DeliveryView, csrfToken: string): string {
  return d.replay_requested_at
    ? '<span class="muted small">Resend queued</span>'
    : buttonForm(`/portal/deliveries/${d.id}/resend`, csrfToken, 'Resend');
}

export function deliveriesPage(
  frame: PageFrame & { user: NonNullable<PageFrame['user']> },
  rows: DeliveryView[],
  o: ListPageOptions,
): string {
  const cells = rows.map((d) => [
    when(d.created_at),
    `${esc(d.event)}<br><span class="muted small">${esc(d.kind)}</span>`,
    `<code>${esc(d.reference)}</code>`,
    statusCell(d.status, DELIVERY_STATUS_NAMES),
    `<details><summary>${d.attempts} attempt${d.attempts === 1 ? '' : 's'}</summary>${d.attempt_log
      .map(
        (a) =>
          `<div class="small">#${a.attempt} ${esc(when(a.attempted_at))} · ${esc(a.http_status ?? 'no answer')} · ${a.latency_ms} ms${a.error ? ` · ${esc(a.error)}` : ''}${a.replay ? ' · resend' : ''}</div>`,
      )
      .join('')}</details>`,
    resendForm(d, frame.user.csrfToken),
    `<a href="/portal/deliveries/${d.id}"><code>${esc(d.id)}</code></a>`,
  ]);
  return layout(
    frame,
    `${filterForm(o)}${table('Callback deliveries', ['Created', 'Event', 'Reference', 'Status', 'Attempts', 'Action', 'Event ID'], cells, 'No deliveries match.')}${pager(o)}`,
  );
}

export function deliveryPage(frame: PageFrame & { user: NonNullable<PageFrame['user']> }, d: DeliveryView): string {
  return layout(
    frame,
    `<div class="card"><dl>
<dt>Event ID (X-Event-Id)</dt><dd><code id="event-id">${esc(d.id)}</code></dd>
<dt>Event</dt><dd>${esc(d.event)} (${esc(d.kind)})</dd><dt>Reference</dt><dd><code>${esc(d.reference)}</code></dd>
<dt>URL</dt><dd><code>${esc(d.url)}</code></dd><dt>Status</dt><dd>${statusCell(d.status, DELIVERY_STATUS_NAMES)}</dd>
<dt>Next attempt</dt><dd>${d.status === 'PENDING' ? esc(when(d.next_attempt_at)) : '—'}</dd></dl>
<div class="actions">${resendForm(d, frame.user.csrfToken)}<a href="/portal/deliveries">All deliveries</a></div>
<p class="muted small">Resend sends the same body with the same X-Event-Id to this URL, newly signed.</p></div>
${attemptsTable(d)}`,
  );
}
