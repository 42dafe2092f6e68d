import type { ApiKeySummary } from '../../auth/gateway/api-keys.service';
import type { CallbackKind } from '../../clients/callback-settings.service';
import type { DeliveryDetail, DeliveryView } from '../../callbacks/delivery/callbacks.service';
import type { ListCount, ListFilter } from '../../common/listing';
import { minorUnits } from '../../common/currencies';
import { displayAmount, Money } from '../../common/money';
import type { FloatAlert } from '../../float/float-alerts.service';
import type { FloatBalance } from '../../float/float-balance.service';
import type { PaymentDetail, PaymentListRow } from '../../collections/payments.repository';
import type { PayoutDetail, PayoutListRow } from '../../payouts/payouts.repository';
import type { ReconRow } from '../../reconciliation/reconciliation.repository';
import { barChart } from './charts';
import { buttonForm, Column, csrfField, esc, layout, money, PageFrame, table, when } from './html';

/** The frame of a signed-in page: it has the user (navigation, CSRF token, time zone). */
export type SignedInFrame = PageFrame & { user: NonNullable<PageFrame['user']> };

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

/** An error or notice page; with navigation when someone is signed in, so they can go on from it. */
export function messagePage(frame: PageFrame, message: string): string {
  const back = frame.user ? '<a href="/portal">Back to the overview</a>' : '<a href="/portal/login">Go to sign-in</a>';
  return layout(frame, `<div class="card" role="alert"><p>${esc(message)}</p><p>${back}</p></div>`);
}

/** One currency's collections or payouts over the overview's days: totals, and one entry per day (none missing). */
export interface Series {
  currency: string;
  count: number;
  successful: number;
  amount: string;
  days: Array<{ day: string; count: number; successful: number; amount: string }>;
}

export interface OverviewView {
  floats: Array<FloatBalance & { account_number: string }>;
  alerts: FloatAlert[];
  period: number;
  periods: readonly number[];
  collections: Series[];
  payouts: Series[];
  timeZones: string[];
}

function seriesCard(title: string, series: Series[], period: number): string {
  const body =
    series.length === 0
      ? `<p class="muted">None in the last ${period} days.</p>`
      : series
          .map((s) => {
            const amounts = s.days.map((d) => ({
              day: d.day,
              value: Number(d.amount),
              label: `${s.currency} ${displayAmount(d.amount, s.currency)}`,
            }));
            const counts = s.days.map((d) => ({ day: d.day, value: d.count, label: `${d.count} (${d.successful} successful)` }));
            const top = s.days.reduce((a, b) => (new Money(b.amount).gt(a.amount) ? b : a), s.days[0]);
            const rows = [...s.days].reverse().map((d) => [esc(d.day), String(d.count), String(d.successful), money(d.amount, s.currency)]);
            return `<p class="figure">${money(s.amount, s.currency)}</p>
<p class="muted">${s.successful} successful of ${s.count}</p>
<h3 class="small">Successful volume per day</h3>${barChart(`${title} volume per day, ${s.currency}`, amounts, `${s.currency} ${displayAmount(top.amount, s.currency)}`)}
<h3 class="small">${esc(title)} per day</h3>${barChart(`${title} per day, ${s.currency}`, counts, String(Math.max(...s.days.map((d) => d.count))))}
<details><summary>Figures per day (${esc(s.currency)})</summary>${table(
              `${title} per day, ${s.currency}`,
              ['Day', 'Count', 'Successful', { label: 'Successful volume', amount: true }],
              rows,
              '',
            )}</details>`;
          })
          .join('');
  const id = `h-${title.toLowerCase()}`;
  return `<section class="card" aria-labelledby="${id}"><h2 id="${id}">${esc(title)}</h2>${body}</section>`;
}

export function overviewPage(frame: SignedInFrame, view: OverviewView): string {
  const floats = table(
    'Float and settlement balances',
    ['Account', 'Status', { label: 'Available', amount: true }, { label: 'Reserved', amount: true }, { label: 'Total', amount: true }],
    view.floats.map((f) => [
      `<code>${esc(f.account_number)}</code>`,
      esc(f.status),
      money(f.balance, f.currency),
      money(f.reserved_balance, f.currency),
      money(f.ledger_balance, f.currency),
    ]),
    'No settlement wallet is linked to a client service yet.',
  );
  const banners = view.alerts
    .filter((a) => a.low)
    .map(lowFloatBanner)
    .join('\n');
  const tabs = view.periods
    .map((days) => `<a href="/portal?days=${days}"${days === view.period ? ' aria-current="page"' : ''}>Last ${days} days</a>`)
    .join('');
  const zones = view.timeZones.map((zone) => `<option${zone === frame.user.timeZone ? ' selected' : ''}>${esc(zone)}</option>`).join('');
  return layout(
    frame,
    `${banners}<h2>Balances</h2><p class="muted small">Available is what new payouts can use; reserved is held for payouts and airtime in flight.</p>${floats}
${floatAlertForms(frame, view)}
<h2>Activity</h2><nav class="tabs" aria-label="Period">${tabs}</nav>
<div class="grid">${seriesCard('Collections', view.collections, view.period)}${seriesCard('Payouts', view.payouts, view.period)}</div>
<form method="post" action="/portal/time-zone" class="card filters">${csrfField(frame.user.csrfToken)}
<div><label for="time-zone">Time zone of days and times</label><select id="time-zone" name="time_zone">${zones}</select></div>
<div class="actions"><button type="submit" class="secondary">Save time zone</button></div></form>`,
  );
}

/** The banner of a float whose alert fired and has not re-armed. */
function lowFloatBanner(alert: FloatAlert): string {
  const amount = (value: string) => `${esc(alert.currency)} ${esc(displayAmount(value, alert.currency))}`;
  return `<p class="notice err" role="alert"><strong>Low float:</strong> the available balance of <code>${esc(alert.account_number)}</code>
fell below your alert level of ${amount(alert.threshold)}. The alert is sent once; it re-arms when the balance is back at
${amount(alert.rearm_balance)}.</p>`;
}

/** Per float, its low-balance alert: threshold and SMS number, saved or cleared. */
function floatAlertForms(frame: SignedInFrame, view: OverviewView): string {
  if (view.floats.length === 0) return '';
  const forms = view.floats.map((f) => {
    const alert = view.alerts.find((a) => a.account_number === f.account_number);
    const id = (field: string) => `alert-${f.account_number}-${field}`;
    const action = `/portal/float-alerts/${encodeURIComponent(f.account_number)}`;
    const amount = (value: string) => `${esc(f.currency)} ${esc(displayAmount(value, f.currency))}`;
    const sent = alert ? ` Sent ${alert.alerts} time${alert.alerts === 1 ? '' : 's'}.` : '';
    const state = !alert
      ? 'No alert set.'
      : alert.low
        ? `Low: re-arms at ${amount(alert.rearm_balance)}.${sent}`
        : `Armed: fires below ${amount(alert.threshold)}.${sent}`;
    return `<section class="card" aria-labelledby="${id('h')}"><h3 id="${id('h')}">Float <code>${esc(f.account_number)}</code></h3>
<p class="muted small">${state}</p>
<form method="post" action="${esc(action)}">${csrfField(frame.user.csrfToken)}
<label for="${id('threshold')}">Alert when available falls below (${esc(f.currency)})</label>
<input id="${id('threshold')}" name="threshold" type="text" inputmode="decimal" required value="${alert ? new Money(alert.threshold).toFixed(minorUnits(f.currency)) : ''}">
<label for="${id('sms')}">Also SMS to <span class="muted small">(optional)</span></label>
<input id="${id('sms')}" name="sms" type="tel" autocomplete="tel" value="${esc(alert?.contact_msisdn)}">
<div class="actions"><button type="submit">Save alert</button></div></form>
${alert ? buttonForm(`${action}/clear`, frame.user.csrfToken, 'Clear alert', 'secondary', `Clear the alert of ${f.account_number}`) : ''}</section>`;
  });
  return `<h2>Low-balance alerts</h2><p class="muted small">One <code>float.low_balance</code> callback (to your payouts callback URL) and SMS each time the
available balance falls below the level; none while it stays below, and again only after it is back 10% above it.</p>
<div class="grid">${forms.join('\n')}</div>`;
}

export function apiKeysPage(
  frame: SignedInFrame,
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
  const tz = frame.user.timeZone;
  const rows = keys.map((k) => [
    `<code>${esc(k.consumer_key)}</code>`,
    when(k.created_at, tz),
    when(k.last_authenticated_at, tz),
    k.revoked_at ? `Revoked ${esc(when(k.revoked_at, tz))}` : 'Live',
    k.revoked_at
      ? ''
      : buttonForm(
          `/portal/api-keys/${encodeURIComponent(k.consumer_key)}/revoke`,
          frame.user.csrfToken,
          'Revoke',
          'danger',
          `Revoke ${k.consumer_key}`,
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
  frame: SignedInFrame,
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
    ? `<p>The previous secret stays valid until <strong>${esc(when(view.previousValidUntil, frame.user.timeZone))}</strong>: until then callbacks carry both signatures
(<code>X-Signature: t=…,v1=&lt;new&gt;,v1=&lt;previous&gt;</code>, <code>webhook-signature: v1,&lt;new&gt; v1,&lt;previous&gt;</code>).</p>`
    : '';
  return layout(
    frame,
    `<div class="grid">${forms}</div>
<section class="card" aria-labelledby="h-secret"><h2 id="h-secret">Signing secret</h2>${newSecret}
<p>Every callback is signed twice with this secret: <code>X-Signature: t=&lt;unix seconds&gt;,v1=&lt;HMAC-SHA256(secret, "t.body")&gt;</code>
(Stripe's <code>constructEvent</code> verifies it), and the Standard Webhooks headers <code>webhook-id</code> (the event id),
<code>webhook-timestamp</code> and <code>webhook-signature: v1,&lt;base64&gt;</code> (the <code>standardwebhooks</code> and Svix libraries verify them).
Both take the <code>whsec_…</code> secret as it is. Last rotated ${esc(when(view.rotatedAt, frame.user.timeZone))}.</p>${overlap}
<p class="muted small">Rotating issues a new secret; the current one stays valid for ${view.overlapHours} h so you can deploy the new one.
A secret issued before Standard Webhooks signing may hold <code>-</code> or <code>_</code>: give it to a Standard Webhooks library with those
written <code>+</code> and <code>/</code> after <code>whsec_</code>, or rotate.</p>
${buttonForm('/portal/callbacks/signing-secret/rotate', frame.user.csrfToken, 'Rotate the signing secret', 'danger')}</section>`,
  );
}

/** A page of a list, with where the pages before and after it start and how many rows the filter matches. */
export interface ListPage<T> {
  rows: T[];
  /** Cursor of the older page, null on the last. */
  older: string | null;
  /** Cursor of the newer page, null on the first. */
  newer: string | null;
  count: ListCount;
}

export interface ListPageOptions {
  path: string;
  filter: ListFilter;
  statuses: Record<string, string>;
  /** What the search box finds by ("Reference, phone number or amount"). */
  searchLabel: string;
  /** The list has a CSV export at `${path}.csv`. */
  csv?: boolean;
}

/** The filter's fields as query parameters (the list's own names). */
function filterParams(f: ListFilter): Record<string, string> {
  const params: Record<string, string> = {};
  if (f.status) params.status = f.status;
  if (f.from) params.from = f.from;
  if (f.to) params.to = f.to;
  if (f.search) params.q = f.search;
  return params;
}

function filterForm(o: ListPageOptions): string {
  const f = o.filter;
  const options = [['', 'Any'], ...Object.entries(o.statuses)]
    .map(([value, label]) => `<option value="${esc(value)}"${f.status === value ? ' selected' : ''}>${esc(label)}</option>`)
    .join('');
  const query = new URLSearchParams(filterParams(f)).toString();
  return `<form method="get" action="${o.path}" class="card filters" role="search" aria-label="Filter">
<div><label for="f-q">Search</label><input id="f-q" name="q" type="search" value="${esc(f.search)}" placeholder="${esc(o.searchLabel)}" aria-describedby="f-q-hint"><p class="muted small" id="f-q-hint">${esc(o.searchLabel)}</p></div>
<div><label for="f-status">Status</label><select id="f-status" name="status">${options}</select></div>
<div><label for="f-from">From</label><input id="f-from" name="from" type="date" value="${esc(f.from)}"></div>
<div><label for="f-to">To</label><input id="f-to" name="to" type="date" value="${esc(f.to)}"></div>
<div class="actions"><button type="submit">Filter</button><a href="${o.path}">Clear</a>
${o.csv ? `<a href="${o.path}.csv${query ? `?${esc(query)}` : ''}" download>Export CSV</a>` : ''}</div></form>`;
}

function pager(o: ListPageOptions, page: ListPage<unknown>): string {
  const link = (cursor: string, direction: 'after' | 'before', label: string, rel: string) =>
    `<a href="${o.path}?${esc(new URLSearchParams({ ...filterParams(o.filter), [direction]: cursor }).toString())}" rel="${rel}">${label}</a>`;
  const { total, newer } = page.count;
  const shown = page.rows.length === 0 ? '' : `<span>${newer + 1}–${newer + page.rows.length} of ${total.toLocaleString('en-GB')}</span>`;
  return `<nav class="pager" aria-label="Pages">${page.newer ? link(page.newer, 'before', '← Newer', 'prev') : ''}${shown}${
    page.older ? link(page.older, 'after', 'Older →', 'next') : ''
  }</nav>`;
}

const STATUS_COLUMN: Column = 'Status';

/** One line of a list of money movements (payments, payouts). */
interface MovementLine {
  href: string;
  reference: string;
  /** Shown small after the reference (a payout's kind). */
  note?: string;
  createdAt: Date;
  /** Who paid or was paid, already escaped. */
  party: string;
  amount: string;
  fee: string | null;
  currency: string;
  status: string;
}

/** A list of money movements: reference (to its page), when, who, amount, fee and status, under the filter, with the pager. */
function movementsPage(
  frame: SignedInFrame,
  page: ListPage<unknown>,
  o: ListPageOptions,
  caption: string,
  partyLabel: string,
  lines: MovementLine[],
): string {
  const tz = frame.user.timeZone;
  const cells = lines.map((l) => [
    `<a href="${esc(l.href)}"><code>${esc(l.reference)}</code></a>${l.note ? ` <span class="muted small">${esc(l.note)}</span>` : ''}`,
    when(l.createdAt, tz),
    l.party,
    money(l.amount, l.currency),
    money(l.fee, l.currency),
    statusCell(l.status, o.statuses),
  ]);
  const columns: Column[] = [
    'Reference',
    'Created',
    partyLabel,
    { label: 'Amount', amount: true },
    { label: 'Fee', amount: true },
    STATUS_COLUMN,
  ];
  return layout(frame, `${filterForm(o)}${table(caption, columns, cells, `No ${caption.toLowerCase()} match.`)}${pager(o, page)}`);
}

export function paymentsPage(frame: SignedInFrame, page: ListPage<PaymentListRow>, o: ListPageOptions): string {
  const lines = page.rows.map((p) => ({
    href: `/portal/payments/${p.id}`,
    reference: p.external_reference,
    createdAt: p.created_at,
    party: esc(p.payer_msisdn),
    amount: p.amount,
    fee: p.fee,
    currency: p.currency,
    status: String(p.status),
  }));
  return movementsPage(frame, page, o, 'Payments', 'Payer', lines);
}

export function payoutsPage(frame: SignedInFrame, page: ListPage<PayoutListRow>, o: ListPageOptions): string {
  const lines = page.rows.map((p) => ({
    href: `/portal/payouts/${p.id}`,
    reference: p.payout_reference,
    note: p.kind,
    createdAt: p.created_at,
    party: `${esc(p.recipient_account_number)} <span class="muted small">${esc(p.destination_type)}</span>`,
    amount: p.amount,
    fee: p.fee,
    currency: p.currency,
    status: String(p.status),
  }));
  return movementsPage(frame, page, o, 'Payouts', 'Recipient', lines);
}

export function deliveriesPage(frame: SignedInFrame, page: ListPage<DeliveryView>, o: ListPageOptions): string {
  const tz = frame.user.timeZone;
  const cells = page.rows.map((d) => {
    const last = d.attempt_log[d.attempt_log.length - 1];
    return [
      `<a href="/portal/deliveries/${esc(d.id)}"><code>${esc(d.id)}</code></a>`,
      when(d.created_at, tz),
      `${esc(d.event)} <span class="muted small">${esc(d.kind)}</span>`,
      `<code>${esc(d.reference)}</code>`,
      statusCell(d.status, DELIVERY_STATUS_NAMES),
      `${d.attempts}${last ? ` <span class="muted small">last ${esc(last.http_status ?? 'no answer')}</span>` : ''}`,
    ];
  });
  const columns: Column[] = ['Event ID', 'Created', 'Event', 'Reference', STATUS_COLUMN, 'Attempts'];
  return layout(frame, `${filterForm(o)}${table('Callback deliveries', columns, cells, 'No deliveries match.')}${pager(o, page)}`);
}

/** Facts as a description list: label and (already escaped) value. */
function facts(pairs: Array<[string, string]>): string {
  return `<dl class="facts">${pairs.map(([label, value]) => `<dt>${esc(label)}</dt><dd>${value}</dd>`).join('')}</dl>`;
}

const deliveriesOf = (reference: string) =>
  `<a href="/portal/deliveries?${esc(new URLSearchParams({ q: reference }).toString())}">Callbacks about this reference</a>`;

export function paymentPage(frame: SignedInFrame, p: PaymentDetail): string {
  const tz = frame.user.timeZone;
  const m = (value: string | null) => money(value, p.currency);
  return layout(
    frame,
    `<div class="card">${facts([
      ['Reference', `<code id="reference">${esc(p.external_reference)}</code>`],
      ['Payment ID', `<code>${esc(p.id)}</code>`],
      ['Status', statusCell(p.status, PAYMENT_STATUS_NAMES)],
      ['Created', esc(when(p.created_at, tz))],
      ['Settled', esc(when(p.settled_at, tz))],
      ['Payer', `${esc(p.payer_msisdn)}${p.payer_name ? ` · ${esc(p.payer_name)}` : ''}`],
      ['Paid by the payer', m(p.amount)],
      ['Amount', m(p.service_amount)],
      ['Transaction charge (paid by the payer)', p.add_transaction_charge ? m(p.transaction_charge) : m(null)],
      ['Fee charged', m(p.fee)],
      ['Received in the settlement wallet', m(p.net)],
      ['Description', esc(p.description)],
      ['Account number', `<code>${esc(p.account_number)}</code>`],
      ['Service', `<code>${esc(p.service_code)}</code> · ${esc(p.payment_method_code)}`],
      ['Operator receipt', p.payer_transaction_id ? `<code>${esc(p.payer_transaction_id)}</code>` : '—'],
    ])}
<div class="actions">${deliveriesOf(p.external_reference)}<a href="/portal/payments">All payments</a></div></div>`,
  );
}

export function payoutPage(frame: SignedInFrame, p: PayoutDetail): string {
  const tz = frame.user.timeZone;
  const r = p.request;
  const name = [r.recipient_first_name, r.recipient_middle_name, r.recipient_last_name, r.recipient_name].filter(Boolean).join(' ');
  return layout(
    frame,
    `<div class="card">${facts([
      ['Reference', `<code id="reference">${esc(p.payout_reference)}</code>`],
      ['Payout ID', `<code>${esc(p.id)}</code>`],
      ['Kind', esc(p.kind)],
      ['Status', `${statusCell(p.status, PAYOUT_STATUS_NAMES)}${p.result_description ? ` · ${esc(p.result_description)}` : ''}`],
      ['Created', esc(when(p.created_at, tz))],
      ['Result time', esc(when(p.transaction_time, tz))],
      ['Recipient', `${esc(name || '—')}`],
      [
        'Destination',
        `${esc(p.destination_type)} · ${esc(p.destination_name)}${p.recipient_bank_code ? ` · bank ${esc(p.recipient_bank_code)}` : ''}`,
      ],
      ['Account number', `<code>${esc(p.recipient_account_number)}</code>`],
      ['Phone number', p.recipient_phone_number ? esc(p.recipient_phone_number) : '—'],
      ['Amount', money(p.amount, p.currency)],
      ['Fee charged', money(p.charged_fee, p.currency)],
      ['Description', esc(r.payment_description ?? '—')],
      ['Paid from', `<code>${esc(p.float_account_number)}</code>`],
      ['Operator receipt', p.rail_reference ? `<code>${esc(p.rail_reference)}</code>` : '—'],
    ])}
<div class="actions">${deliveriesOf(p.payout_reference)}<a href="/portal/payouts">All payouts</a></div></div>`,
  );
}

/** A body as sent or received: pretty JSON when it is JSON, else the text itself. */
function body(text: string | null): string {
  if (text === null || text === '') return '<span class="muted">(empty)</span>';
  try {
    return `<pre>${esc(JSON.stringify(JSON.parse(text), null, 2))}</pre>`;
  } catch {
    return `<pre>${esc(text)}</pre>`;
  }
}

function resendForm(d: DeliveryView, csrfToken: string): string {
  return d.replay_requested_at
    ? '<span class="muted small">Resend queued</span>'
    : buttonForm(`/portal/deliveries/${d.id}/resend`, csrfToken, 'Resend');
}

export function deliveryPage(frame: SignedInFrame, d: DeliveryDetail): string {
  const tz = frame.user.timeZone;
  const attempts = table(
    `Attempts of ${d.id}`,
    ['#', 'Time', 'Kind', 'HTTP status', 'Latency', 'Response'],
    d.attempt_log.map((a) => [
      String(a.attempt),
      when(a.attempted_at, tz),
      a.replay ? 'Resend' : 'Scheduled',
      esc(a.http_status ?? '—'),
      `${a.latency_ms} ms`,
      a.error && a.http_status === null ? esc(a.error) : body(a.response_body),
    ]),
    'Not attempted yet.',
  );
  return layout(
    frame,
    `<div class="card">${facts([
      ['Event ID (X-Event-Id)', `<code id="event-id">${esc(d.id)}</code>`],
      ['Event', `${esc(d.event)} (${esc(d.kind)})`],
      ['Reference', `<code>${esc(d.reference)}</code>`],
      ['URL', `<code>${esc(d.url)}</code>`],
      ['Status', statusCell(d.status, DELIVERY_STATUS_NAMES)],
      ['Next attempt', d.status === 'PENDING' ? esc(when(d.next_attempt_at, tz)) : '—'],
    ])}
<div class="actions">${resendForm(d, frame.user.csrfToken)}<a href="/portal/deliveries">All deliveries</a></div>
<p class="muted small">Resend sends the same body with the same X-Event-Id to this URL, newly signed.</p></div>
<section class="card" aria-labelledby="h-request"><h2 id="h-request">Request body</h2>${body(JSON.stringify(d.payload))}</section>
${attempts}`,
  );
}

/** The statement download form: a wallet of the client, a period, a format (the wallet service's statement). */
export function statementsPage(frame: SignedInFrame, accounts: Array<{ account_number: string; currency: string }>): string {
  const today = new Date().toISOString().slice(0, 10);
  const monthStart = `${today.slice(0, 8)}01`;
  const options = accounts
    .map((a) => `<option value="${esc(a.account_number)}">${esc(a.account_number)} (${esc(a.currency)})</option>`)
    .join('');
  return layout(
    frame,
    `<form method="get" action="/portal/statements/download" class="card">
<p>The wallet's statement for a period: every movement with its transaction id, your reference and its fee on a line of its own,
the opening and closing balance. Dates are UTC days, both included.</p>
<label for="s-account">Wallet</label><select id="s-account" name="account_number" required>${options}</select>
<div class="filters"><div><label for="s-from">From</label><input id="s-from" name="start_date" type="date" required value="${monthStart}"></div>
<div><label for="s-to">To</label><input id="s-to" name="end_date" type="date" required value="${today}"></div>
<div><label for="s-format">Format</label><select id="s-format" name="doc_type"><option value="PDF">PDF</option><option value="EXCEL">Excel (XLSX)</option></select></div></div>
<div class="actions"><button type="submit">Download the statement</button></div></form>`,
  );
}

/** What each reconciliation outcome means to the merchant whose money it touches. */
export const RECON_OUTCOME_NAMES: Record<string, string> = {
  MISSING_AT_OPERATOR: "Not in the operator's records",
  AMOUNT_MISMATCH: 'Amounts differ',
  STATUS_MISMATCH: 'Outcomes differ',
  DUPLICATE_AT_OPERATOR: 'Listed twice by the operator',
  MISSING_AT_US: 'Not in our records',
};
const RECON_STATE_NAMES: Record<string, string> = { OPEN: 'Being worked on', SETTLED: 'Settled', RESOLVED: 'Resolved' };
const RAIL_NAMES: Record<string, string> = { mpesa: 'M-Pesa', jenga: 'Equity (Jenga)', africastalking: "Africa's Talking" };
const RECORD_LINKS: Record<string, string> = { CHARGE: '/portal/payments/', PAYOUT: '/portal/payouts/' };

/** The record a difference is about: a link to the payment or payout page, else its kind and id. */
function recordOf(d: ReconRow): string {
  if (!d.our_kind || !d.our_record_id) return '—';
  const base = RECORD_LINKS[d.our_kind];
  const label = `${esc(d.our_kind.toLowerCase())} <code>${esc(d.our_record_id)}</code>`;
  return base ? `<a href="${base}${esc(encodeURIComponent(d.our_record_id))}">${label}</a>` : label;
}

/** The differences reconciliation found on the merchant's movements: read-only, newest first. */
export function reconciliationPage(frame: SignedInFrame, differences: ReconRow[]): string {
  const tz = frame.user.timeZone;
  const rows = differences.map((d) => [
    esc(when(d.moved_at, tz)),
    esc(RAIL_NAMES[d.rail] ?? d.rail),
    `<a href="/portal/reconciliation/${esc(d.id)}">${esc(RECON_OUTCOME_NAMES[d.outcome] ?? d.outcome)}</a>`,
    recordOf(d),
    money(d.our_amount, d.currency ?? ''),
    money(d.operator_amount, d.currency ?? ''),
    esc(RECON_STATE_NAMES[d.state ?? ''] ?? d.state),
  ]);
  return layout(
    frame,
    `<p>Each day we compare what the operators say they moved with our records. These are the differences found on your
payments and payouts, and where each stands; we work every one of them to the end.</p>
${table(
  'Differences',
  [
    'Moved at',
    'Operator',
    'Difference',
    'Record',
    { label: 'Our amount', amount: true },
    { label: "Operator's amount", amount: true },
    'State',
  ],
  rows,
  'No differences: everything the operators reported matched our records.',
)}`,
  );
}

export function differencePage(frame: SignedInFrame, d: ReconRow): string {
  const tz = frame.user.timeZone;
  const closed =
    d.state === 'RESOLVED' ? `Resolved: ${esc(d.resolution_note)}` : d.state === 'SETTLED' ? 'Settled by the operator’s answer' : '—';
  return layout(
    frame,
    `<div class="card">${facts([
      ['Difference', esc(RECON_OUTCOME_NAMES[d.outcome] ?? d.outcome)],
      ['State', esc(RECON_STATE_NAMES[d.state ?? ''] ?? d.state)],
      ['Operator', esc(RAIL_NAMES[d.rail] ?? d.rail)],
      ['Moved at', esc(when(d.moved_at, tz))],
      ['Record', recordOf(d)],
      ['Our reference', d.our_reference ? `<code>${esc(d.our_reference)}</code>` : '—'],
      ["Operator's reference", d.operator_reference ? `<code>${esc(d.operator_reference)}</code>` : '—'],
      ['Our amount', money(d.our_amount, d.currency ?? '')],
      ["Operator's amount", money(d.operator_amount, d.currency ?? '')],
      ['Our status', esc(d.our_status ?? '—')],
      ["Operator's status", esc(d.operator_status ?? '—')],
      ['Outcome', closed],
      ['Closed', esc(when(d.closed_at, tz))],
    ])}
<div class="actions"><a href="/portal/reconciliation">All differences</a></div></div>`,
  );
}
