import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { airtimeServiceCode } from '../airtime/airtime.repository';
import { WalletPrincipal } from '../auth/principal';
import { ApiKeysService } from '../auth/gateway/api-keys.service';
import { generatePassword, UsersService } from '../auth/users.service';
import { CALLBACK_KINDS, CallbackKind, CallbackSettingsService } from '../clients/callback-settings.service';
import { ClientServicesService } from '../client-services/client-services.service';
import { ClientsService } from '../clients/clients.service';
import { Money } from '../common/money';
import { FxService } from '../fx/fx.service';
import { SANDBOX_KES_RATES } from '../fx/sandbox-rates';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { ProfilesService } from '../wallets/profiles.service';
import { MoneyMovementsService } from '../transactions/money-movements.service';
import { AccountTypesService } from '../wallets/account-types.service';
import { WalletsService } from '../wallets/wallets.service';

export interface SeedOptions {
  clientCode: string;
  callback?: { url: string; username: string; password: string };
}

const SEED_CURRENCY = 'KES';
const SEED_FLOAT = new Money('1000000');
const SEED_PROFILE_ID = 'SETTLEMENT';
const SEED_ACCOUNT_TYPE = 'Settlement';
const SEED_SERVICE_NAME = 'Default service';
/** Until the merchant sets its own, each kind goes to README's receiver on loopback (sandbox only: plain http). */
const SEED_CALLBACK_URLS: Record<CallbackKind, string> = {
  collections: 'http://127.0.0.1:4000/callbacks',
  payouts: 'http://127.0.0.1:4000/payouts',
  airtime: 'http://127.0.0.1:4000/airtime',
};

/**
 * `npm run admin -- seed` (provider contract §8, §10): creates what is missing and reuses what exists. Secrets
 * are stored hashed, so every run issues fresh ones and prints them.
 */
@Injectable()
export class SeedService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly clients: ClientsService,
    private readonly users: UsersService,
    private readonly profiles: ProfilesService,
    private readonly accountTypes: AccountTypesService,
    private readonly wallets: WalletsService,
    private readonly services: ClientServicesService,
    private readonly movements: MoneyMovementsService,
    private readonly fx: FxService,
    private readonly apiKeys: ApiKeysService,
    private readonly callbackSettings: CallbackSettingsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async seed(options: SeedOptions): Promise<Record<string, unknown>> {
    const client =
      (await this.clients.findByCode(options.clientCode)) ??
      (await this.clients.create(options.clientCode, `${options.clientCode} merchant`));
    const username = `${client.code.toLowerCase()}-admin`;
    const password = generatePassword();
    const user = await this.users.upsert(client.id, username, password);
    const principal: WalletPrincipal = { userId: user.id, clientId: client.id, clientCode: client.code };

    await this.ensureProfile(principal);
    const serviceCode = await this.ensureService(principal);
    const settlementAccountNumber = await this.ensureSettlementWallet(principal, serviceCode);
    for (const [currency, rate] of Object.entries(SANDBOX_KES_RATES)) {
      await this.fx.setRate(SEED_CURRENCY, currency, new Money(rate.buying), new Money(rate.selling), 'seed');
    }
    await this.ensureCallbacks(client.id, options.callback);
    const signingSecret = await this.callbackSettings.rotateSigningSecret(client.id);
    const apiKey = await this.apiKeys.issue(client.id);
    return {
      client_code: client.code,
      username,
      password,
      consumer_key: apiKey.consumer_key,
      consumer_secret: apiKey.consumer_secret,
      service_code: serviceCode,
      settlement_account_number: settlementAccountNumber,
      currency: SEED_CURRENCY,
      signing_secret: signingSecret,
    };
  }

  /**
   * Every kind (contract §10), so the seeded merchant hears of payouts, B2B and airtime too: the endpoint given, or
   * in sandbox the default of each kind the merchant has not set (a re-seed keeps what it set in the portal).
   */
  private async ensureCallbacks(clientId: string, given: SeedOptions['callback']): Promise<void> {
    for (const kind of CALLBACK_KINDS) {
      if (given) await this.callbackSettings.setEndpoint(clientId, kind, given);
      else if (this.config.isSandbox && !(await this.callbackSettings.endpointFor(this.db.manager, clientId, kind)))
        await this.callbackSettings.setEndpoint(clientId, kind, { url: SEED_CALLBACK_URLS[kind], username: null, password: null });
    }
  }

  private async ensureProfile(principal: WalletPrincipal): Promise<void> {
    const [existing] = await this.db.query(`SELECT 1 FROM profiles WHERE client_id = $1 AND client_profile_id = $2`, [
      principal.clientId,
      SEED_PROFILE_ID,
    ]);
    if (existing) return;
    await this.profiles.create(principal, {
      client_code: principal.clientCode,
      profile_name: `${principal.clientCode} settlement`,
      profile_type: 'BUSINESS',
      client_profile_id: SEED_PROFILE_ID,
      profile_email: 'finance@example.com',
      profile_msisdn: '254700000000',
      contact_person_name: 'Finance Desk',
      contact_person_email: 'finance@example.com',
      contact_person_msisdn: '254700000000',
      identification_number: 'P000000000A',
      physical_address: 'Nairobi',
      country: 'Kenya',
      description: 'Created by seed',
      is_active: 1,
    });
  }

  /** The seeded service: FIXED fee 10, bounds 1 to 1,000,000, the client's default airtime service. */
  private async ensureService(principal: WalletPrincipal): Promise<string> {
    const existing = await airtimeServiceCode(this.db, principal.clientId, null);
    if (existing) return existing;
    const created = await this.services.create(principal, {
      client_code: principal.clientCode,
      client_service_name: SEED_SERVICE_NAME,
      service_code: 'CUSTOM_SERVICE',
      has_transaction_fee: true,
      transaction_fee_type: 'FIXED',
      transaction_fee: '10',
      minimum_transaction_amount: '1',
      maximum_transaction_amount: '1000000',
      is_active: 1,
    });
    await this.db.query(`UPDATE client_services SET is_default_airtime = true WHERE client_id = $1 AND id = $2`, [
      principal.clientId,
      created.client_service_id,
    ]);
    return created.client_service_code;
  }

  /** The service's float and settlement wallet, funded with 1,000,000.0000 KES when first created. */
  private async ensureSettlementWallet(principal: WalletPrincipal, serviceCode: string): Promise<string> {
    const [existing] = await this.db.query(
      `SELECT a.account_number FROM client_services s JOIN ledger_accounts a ON a.client_id = s.client_id AND a.id = s.settlement_account_id
       WHERE s.client_id = $1 AND s.code = $2`,
      [principal.clientId, serviceCode],
    );
    if (existing) return existing.account_number;
    const type = await this.accountTypes.create(principal, { client_code: principal.clientCode, account_type_name: SEED_ACCOUNT_TYPE });
    const wallet = await this.wallets.create(principal, {
      client_code: principal.clientCode,
      client_profile_id: SEED_PROFILE_ID,
      account_type_code: type.account_type_code,
      account_name: 'Settlement wallet',
      currency: SEED_CURRENCY,
      minimum_balance: 0,
      can_overdraw: false,
      status: 'ACTIVE',
    });
    await this.services.setSettlementWallet(this.db.manager, principal.clientId, serviceCode, wallet.account_id);
    await this.movements.fund(principal.clientId, wallet.account_number, SEED_FLOAT, 'Opening float');
    return wallet.account_number;
  }
}
