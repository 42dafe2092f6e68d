import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CALLBACK_KINDS, CallbackKind, CallbackSettingsService } from '../clients/callback-settings.service';
import { CallbacksService } from '../callbacks/delivery/callbacks.service';
import { DayTotals, everyRow, Keyset, ListCount, ListFilter, ListQuery } from '../common/listing';
import { Money } from '../common/money';
import { FloatAlertsService } from '../float/float-alerts.service';
import { FloatBalanceService } from '../float/float-balance.service';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { ReadReplica } from '../infra/database/read-replica';
import { PaymentsRepository } from '../collections/payments.repository';
import { PayoutsRepository } from '../payouts/payouts.repository';
import { ClientsService } from '../clients/clients.service';
import { firstRow, PAGE_SIZE, toPage } from './list-query';
import type { CallbackSettingsView, ListPage, OverviewView, Series } from './views/pages';

/** The overview's periods, in days (today included). */
export const OVERVIEW_PERIODS = [7, 30] as const;

type Cursor = { after: Keyset | null; before: Keyset | null };

/** The last `days` days (oldest first, today last) in `timeZone`, as YYYY-MM-DD. */
export function lastDays(days: number, timeZone: string, now = new Date()): string[] {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
  const midnight = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => new Date(midnight - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/** Per currency, the totals of the period and one entry per day (a day without records counts zero). */
export function seriesOf(rows: DayTotals[], days: string[]): Series[] {
  const currencies = [...new Set(rows.map((r) => r.currency))].sort();
  return currencies.map((currency) => {
    const byDay = new Map(rows.filter((r) => r.currency === currency).map((r) => [r.day, r]));
    const perDay = days.map((day) => {
      const r = byDay.get(day);
      return { day, count: r?.count ?? 0, successful: r?.successful ?? 0, amount: r?.successful_amount ?? '0' };
    });
    return {
      currency,
      count: perDay.reduce((n, d) => n + d.count, 0),
      successful: perDay.reduce((n, d) => n + d.successful, 0),
      amount: perDay.reduce((sum, d) => sum.plus(d.amount), new Money(0)).toFixed(4),
      days: perDay,
    };
  });
}

export interface EndpointForm {
  url?: unknown;
  username?: unknown;
  password?: unknown;
}

/**
 * What the portal's pages read and change, always for the session's client only. The lists and their CSV exports
 * read the replica; the overview, a record's detail page and the settings read the primary, as a page right after
 * a change must show it.
 */
@Injectable()
export class PortalService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly floats: FloatBalanceService,
    private readonly floatAlerts: FloatAlertsService,
    private readonly payments: PaymentsRepository,
    private readonly payouts: PayoutsRepository,
    private readonly callbacks: CallbacksService,
    private readonly callbackSettings: CallbackSettingsService,
    private readonly clients: ClientsService,
    private readonly replica: ReadReplica,
  ) {}

  async overview(clientId: string, timeZone: string, period: number): Promise<Omit<OverviewView, 'timeZones'>> {
    const days = lastDays(period, timeZone);
    const [floats, alerts, collections, payouts] = await Promise.all([
      this.floats.balancesOf(clientId),
      this.floatAlerts.alertsOf(clientId),
      this.payments.dailyTotals(this.db.manager, clientId, timeZone, period),
      this.payouts.dailyTotals(this.db.manager, clientId, timeZone, period),
    ]);
    return {
      floats,
      alerts,
      period,
      periods: OVERVIEW_PERIODS,
      collections: seriesOf(collections, days),
      payouts: seriesOf(payouts, days),
    };
  }

  /** The client's wallets a statement can be asked for (its settlement wallets), from the overview's balances. */
  async statementAccounts(clientId: string) {
    return (await this.floats.balancesOf(clientId)).map((f) => ({ account_number: f.account_number, currency: f.currency }));
  }

  setTimeZone(clientId: string, timeZone: string): Promise<boolean> {
    return this.clients.setTimeZone(clientId, timeZone);
  }

  paymentsPage(clientId: string, filter: ListFilter, cursor: Cursor) {
    return this.page(
      (db, q) => this.payments.list(db.manager, clientId, q),
      (db, first) => this.payments.count(db.manager, clientId, filter, first),
      filter,
      cursor,
    );
  }

  /** Each page of an export is one read: a replica lost midway, the rest comes from the primary. */
  paymentsExport(clientId: string, filter: ListFilter) {
    return everyRow({ filter }, (q) => this.replica.read((db) => this.payments.list(db.manager, clientId, q)));
  }

  payment(clientId: string, id: string) {
    return this.payments.detail(this.db.manager, clientId, id);
  }

  payoutsPage(clientId: string, filter: ListFilter, cursor: Cursor) {
    return this.page(
      (db, q) => this.payouts.list(db.manager, clientId, q),
      (db, first) => this.payouts.count(db.manager, clientId, filter, first),
      filter,
      cursor,
    );
  }

  payoutsExport(clientId: string, filter: ListFilter) {
    return everyRow({ filter }, (q) => this.replica.read((db) => this.payouts.list(db.manager, clientId, q)));
  }

  payout(clientId: string, id: string) {
    return this.payouts.detail(this.db.manager, clientId, id);
  }

  deliveriesPage(clientId: string, filter: ListFilter, cursor: Cursor) {
    return this.page(
      (db, q) => this.callbacks.deliveries(db, clientId, q),
      (db, first) => this.callbacks.countDeliveries(db, clientId, filter, first),
      filter,
      cursor,
    );
  }

  /**
   * A page of a list and its counts, read from the replica: the rows first, then how many the filter matches and how
   * many are newer.
   */
  private page<T extends { position_at: string; id: string }>(
    list: (db: DataSource, q: ListQuery) => Promise<T[]>,
    count: (db: DataSource, first: Keyset | null) => Promise<ListCount>,
    filter: ListFilter,
    cursor: Cursor,
  ): Promise<ListPage<T>> {
    return this.replica.read(async (db) => {
      const fetched = await list(db, { filter, ...cursor, limit: PAGE_SIZE + 1 });
      return toPage(fetched, cursor, await count(db, firstRow(fetched, cursor.before !== null)));
    });
  }

  async callbackSettingsView(clientId: string) {
    const endpoints: CallbackSettingsView[] = await Promise.all(
      CALLBACK_KINDS.map(async (kind) => {
        const endpoint = await this.callbackSettings.endpointFor(this.db.manager, clientId, kind);
        return { kind, url: endpoint?.url ?? null, username: endpoint?.username ?? null, hasPassword: Boolean(endpoint?.password) };
      }),
    );
    const secret = await this.callbackSettings.signingSecretStatus(clientId);
    return { endpoints, ...secret, overlapHours: Math.round((this.config.callbackSecretOverlapMs / 3_600_000) * 10) / 10 };
  }

  /**
   * Saves one kind's endpoint from the form. No username: no Basic auth. A username without a password keeps the
   * stored password (the page never shows it back), and needs one to be stored.
   */
  async saveEndpoint(clientId: string, kind: CallbackKind, form: EndpointForm): Promise<void> {
    const field = (value: unknown, max: number, name: string) => {
      const text = typeof value === 'string' ? value.trim() : '';
      if (text.length > max) throw new BadRequestException(`The ${name} has at most ${max} characters.`);
      return text;
    };
    const url = field(form.url, 500, 'URL');
    const username = field(form.username, 100, 'username');
    const password = typeof form.password === 'string' ? form.password : '';
    if (password.length > 200) throw new BadRequestException('The password has at most 200 characters.');
    if (!url) throw new BadRequestException('Enter the callback URL.');
    let stored: string | null = null;
    if (username && !password) {
      stored = (await this.callbackSettings.endpointFor(this.db.manager, clientId, kind))?.password ?? null;
      if (stored === null) throw new BadRequestException('Enter the Basic-auth password for this username.');
    }
    await this.callbackSettings.setEndpoint(clientId, kind, {
      url,
      username: username || null,
      password: username ? password || stored : null,
    });
  }

  rotateSigningSecret(clientId: string): Promise<string> {
    return this.callbackSettings.rotateSigningSecret(clientId, this.config.callbackSecretOverlapMs);
  }
}
