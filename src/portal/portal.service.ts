import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CALLBACK_KINDS, CallbackKind, CallbackSettingsService } from '../callbacks/settings/callback-settings.service';
import { CallbacksService } from '../callbacks/delivery/callbacks.service';
import { everyRow, Keyset, ListFilter } from '../common/listing';
import { FloatBalanceService } from '../float/float-balance.service';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { PaymentsRepository } from '../collections/payments.repository';
import { PayoutsRepository } from '../payouts/payouts.repository';
import { PAGE_SIZE, toPage } from './list-query';
import type { CallbackSettingsView } from './views/pages';

export interface EndpointForm {
  url?: unknown;
  username?: unknown;
  password?: unknown;
}

/** What the portal's pages read and change, always for the session's client only. */
@Injectable()
export class PortalService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly floats: FloatBalanceService,
    private readonly payments: PaymentsRepository,
    private readonly payouts: PayoutsRepository,
    private readonly callbacks: CallbacksService,
    private readonly callbackSettings: CallbackSettingsService,
  ) {}

  async overview(clientId: string) {
    const [floats, collections, payouts] = await Promise.all([
      this.floats.balancesOf(clientId),
      this.payments.todaysTotals(this.db.manager, clientId),
      this.payouts.todaysTotals(this.db.manager, clientId),
    ]);
    return { floats, collections, payouts };
  }

  async paymentsPage(clientId: string, filter: ListFilter, after: Keyset | null) {
    return toPage(await this.payments.list(this.db.manager, clientId, { filter, after, limit: PAGE_SIZE + 1 }));
  }

  paymentsExport(clientId: string, filter: ListFilter) {
    return everyRow({ filter }, (q) => this.payments.list(this.db.manager, clientId, q));
  }

  async payoutsPage(clientId: string, filter: ListFilter, after: Keyset | null) {
    return toPage(await this.payouts.list(this.db.manager, clientId, { filter, after, limit: PAGE_SIZE + 1 }));
  }

  payoutsExport(clientId: string, filter: ListFilter) {
    return everyRow({ filter }, (q) => this.payouts.list(this.db.manager, clientId, q));
  }

  async deliveriesPage(clientId: string, filter: ListFilter, after: Keyset | null) {
    return toPage(await this.callbacks.deliveries(clientId, { filter, after, limit: PAGE_SIZE + 1 }));
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
