import { JwtService } from '@nestjs/jwt';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import request from 'supertest';
import { GATEWAY_AUDIENCE } from '../../src/auth/gateway/gateway-principal';
import { Money } from '../../src/common/money';
import { FxRefreshService } from '../../src/fx/fx-refresh.service';
import { FxService } from '../../src/fx/fx.service';
import { SANDBOX_KES_RATES } from '../../src/fx/sandbox-rates';
import { cliJson, runCli } from '../support/disbursement-fixtures';
import {
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  startIsolatedSandbox,
  waitFor,
} from '../support/gateway-fixtures';
import { balance, createService, fund, moneyBody, moneyFootprint, post, walletSet } from '../support/money-fixtures';
import { createTenant, dataSource } from '../support/test-app';

const UNAUTHORIZED = { statusCode: 401, message: 'Invalid Authentication Credentials', error: 'Unauthorized' };

/**
 * FX (disbursement document §2 "FX rates response", §4, §5.3; provider contract §5 "FX", §10 "FX"): GET /v1/fx
 * behind the gateway token, the hourly refresh from the sandbox rate source (once per hour however many ask),
 * fx:set, and conversions refusing rates older than FX_MAX_RATE_AGE_MS. A database of its own: the test ages
 * rates, which would disturb other files' conversions.
 */
describe('FX rates, refresh and staleness', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox();
    app = sandbox.app;
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => sandbox?.close());

  const fx = (query = '', token: string | null = merchant.token) => gateway(app, token ?? undefined).get(`/v1/fx${query}`);
  const ageRates = (hours: number, where = 'true') =>
    dataSource(app).query(`UPDATE fx_rates SET updated_at = now() - $1 * interval '1 hour' WHERE ${where}`, [hours]);
  const sandboxRates = Object.fromEntries(Object.entries(SANDBOX_KES_RATES).map(([c, r]) => [c, { buying: r.buying, selling: r.selling }]));

  it('the worker refreshes the rates from the sandbox source when it starts', async () => {
    const refresh = await waitFor('the start-up refresh', async () => {
      const [row] = await dataSource(app).query(`SELECT source, rates, completed_at FROM fx_refreshes WHERE completed_at IS NOT NULL`);
      return row;
    });
    expect(refresh).toMatchObject({ source: 'sandbox', rates: Object.keys(SANDBOX_KES_RATES).length });
    const rows = await dataSource(app).query(`SELECT currency, source FROM fx_rates WHERE base_currency = 'KES' ORDER BY currency`);
    expect(rows).toEqual(
      Object.keys(SANDBOX_KES_RATES)
        .sort()
        .map((currency) => ({ currency, source: 'sandbox' })),
    );
  });

  describe('GET /v1/fx', () => {
    it('answers the base KES rates as string decimals, by default and when asked, with x-access-token or Bearer', async () => {
      const byDefault = await fx().expect(200);
      expect(byDefault.body).toEqual({ base_currency: 'KES', rates: sandboxRates });
      expect((await fx('?base_currency=KES').expect(200)).body).toEqual(byDefault.body);
      const bearer = await request(app.getHttpServer()).get('/v1/fx').set('authorization', `Bearer ${merchant.token}`).expect(200);
      expect(bearer.body).toEqual(byDefault.body);
    });

    it('the token comes from POST /v1/auth, read through expires_in', async () => {
      const auth = await request(app.getHttpServer())
        .post('/v1/auth')
        .send({ consumer_key: merchant.consumerKey, consumer_secret: merchant.consumerSecret });
      expect(auth.body.expires_in).toBe(3600);
      expect((await fx('', auth.body.access_token).expect(200)).body.base_currency).toBe('KES');
    });

    it('a base without quotes of its own is derived from KES with the spread on our side', async () => {
      const res = await fx('?base_currency=USD').expect(200);
      const usd = SANDBOX_KES_RATES.USD;
      const cross = (c: { buying: string; selling: string }) => ({
        buying: new Decimal(c.buying).dividedBy(usd.selling).toDecimalPlaces(8, Decimal.ROUND_DOWN),
        selling: new Decimal(c.selling).dividedBy(usd.buying).toDecimalPlaces(8, Decimal.ROUND_UP),
      });
      expect(res.body.base_currency).toBe('USD');
      expect(Object.keys(res.body.rates).sort()).toEqual(['EUR', 'GBP', 'KES', 'TZS', 'UGX']);
      // One KES costs 1/130.5 USD when we buy it and 1/128.5 when we sell it.
      expect(new Decimal(res.body.rates.KES.buying).equals(cross({ buying: '1', selling: '1' }).buying)).toBe(true);
      expect(new Decimal(res.body.rates.KES.selling).equals(cross({ buying: '1', selling: '1' }).selling)).toBe(true);
      for (const currency of ['EUR', 'GBP', 'TZS', 'UGX']) {
        const expected = cross(SANDBOX_KES_RATES[currency]);
        const got = res.body.rates[currency];
        expect(got.buying).toMatch(/^\d+\.\d{4,8}$/);
        expect(new Decimal(got.buying).equals(expected.buying)).toBe(true);
        expect(new Decimal(got.selling).equals(expected.selling)).toBe(true);
        expect(new Decimal(got.buying).lte(got.selling)).toBe(true);
      }
    });

    it.each([['USD&base_currency=KES'], ['kes'], ['XYZ'], ['KESS'], [''], ['%00']])(
      'base_currency=%s → 400 in the gateway error shape',
      async (value) => {
        const res = await fx(`?base_currency=${value}`).expect(400);
        expect(res.body).toEqual({
          status_code: 172,
          status_description: 'Validation Failed',
          message: expect.stringContaining('base_currency'),
        });
      },
    );

    it('a supported currency no stored rate reaches → 404 in the gateway error shape', async () => {
      const res = await fx('?base_currency=ZMW').expect(404);
      expect(res.body).toEqual({ status_code: 120, status_description: expect.any(String), message: expect.stringContaining('ZMW') });
    });

    it('without a token, with a garbage one or an expired one → 401 with the documented body', async () => {
      expect((await fx('', null).expect(401)).body).toEqual(UNAUTHORIZED);
      expect((await fx('', 'not.a.token').expect(401)).body).toEqual(UNAUTHORIZED);
      const expired = await app
        .get(JwtService)
        .signAsync({ sub: 'key', cid: merchant.clientId, ccode: merchant.clientCode }, { audience: GATEWAY_AUDIENCE, expiresIn: -10 });
      expect((await fx('', expired).expect(401)).body).toEqual(UNAUTHORIZED);
      // A wallet token is not a gateway token.
      expect((await fx('', merchant.tenant.token).expect(401)).body).toEqual(UNAUTHORIZED);
    });
  });

  describe('the hourly refresh', () => {
    it('many asks within one hour refresh once; the next hour refreshes again', async () => {
      const refresh = app.get(FxRefreshService);
      const asks = await Promise.all(Array.from({ length: 6 }, (_, i) => refresh.refreshIfDue(hour(`2001-02-03T10:0${i}:00Z`))));
      expect(asks.filter(Boolean)).toHaveLength(1);
      const [stamp] = await dataSource(app).query(`SELECT max(updated_at) AS at FROM fx_rates WHERE base_currency = 'KES'`);
      expect(await refresh.refreshIfDue(hour('2001-02-03T10:59:59Z'))).toBe(false);
      const [same] = await dataSource(app).query(`SELECT max(updated_at) AS at FROM fx_rates WHERE base_currency = 'KES'`);
      expect(same.at).toEqual(stamp.at);
      const rows = await dataSource(app).query(`SELECT hour, rates FROM fx_refreshes WHERE hour = $1`, [hour('2001-02-03T10:00:00Z')]);
      expect(rows).toEqual([{ hour: hour('2001-02-03T10:00:00Z'), rates: 5 }]);

      expect(await refresh.refreshIfDue(hour('2001-02-03T11:00:00Z'))).toBe(true);
    });

    it('rewrites aged rates with the source quotes, which conversions accept again', async () => {
      await ageRates(5, `base_currency = 'KES'`);
      expect(await app.get(FxRefreshService).refreshIfDue(hour('2001-02-03T12:00:00Z'))).toBe(true);
      expect((await fx().expect(200)).body.rates).toEqual(sandboxRates);
    });

    it('a rate set with fx:set wins until the next refresh, which writes the source quote again', async () => {
      const set = cliJson(
        await runCli(sandbox.db.url, 'fx:set', '--base', 'KES', '--currency', 'USD', '--buying', '120.25', '--selling', '121.75', '--json'),
      );
      expect(set).toEqual({ base_currency: 'KES', currency: 'USD', buying: '120.25', selling: '121.75' });
      expect((await fx().expect(200)).body.rates.USD).toEqual({ buying: '120.2500', selling: '121.7500' });
      expect(await app.get(FxRefreshService).refreshIfDue(hour('2001-02-03T12:30:00Z'))).toBe(false);
      expect((await fx().expect(200)).body.rates.USD).toEqual({ buying: '120.2500', selling: '121.7500' });
      expect(await app.get(FxRefreshService).refreshIfDue(hour('2001-02-03T13:00:00Z'))).toBe(true);
      expect((await fx().expect(200)).body.rates.USD).toEqual(sandboxRates.USD);
    });

    it('fx:set refuses a buying rate above the selling rate, and an unknown currency, changing nothing', async () => {
      const before = await dataSource(app).query(`SELECT * FROM fx_rates ORDER BY base_currency, currency`);
      for (const args of [
        ['--base', 'KES', '--currency', 'USD', '--buying', '131', '--selling', '130'],
        ['--base', 'KES', '--currency', 'XXX', '--buying', '1', '--selling', '2'],
      ]) {
        const result = await runCli(sandbox.db.url, 'fx:set', ...args, '--json');
        expect(result.code).not.toBe(0);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
      }
      expect(await dataSource(app).query(`SELECT * FROM fx_rates ORDER BY base_currency, currency`)).toEqual(before);
    });
  });

  describe('stale rates', () => {
    it('a conversion with a rate older than 2 hours is refused with a 400 naming the pair, and nothing moves', async () => {
      const tenant = await createTenant(app);
      const wallets = await walletSet(app, tenant);
      const service = await createService(app, tenant);
      const account = await wallets.create();
      await fund(app, tenant, account, 1000);
      await post(app, tenant, 'CREDIT', moneyBody(tenant, account, service, 1, { currency: 'USD' })).expect(201);
      const balanceBefore = await balance(app, account);
      const footprint = await moneyFootprint(app, tenant.clientId);

      await ageRates(2.01, `base_currency = 'KES' AND currency = 'USD'`);
      for (const command of ['CREDIT', 'DEBIT'] as const) {
        const res = await post(app, tenant, command, moneyBody(tenant, account, service, 1, { currency: 'USD' })).expect(400);
        expect(res.body.message).toMatch(/USD\/KES exchange rate is stale/);
        expect(res.body.message).toMatch(/2 h/);
      }
      // Into a USD wallet the same pair is used the other way round.
      const usdAccount = await wallets.create({ currency: 'USD' });
      const inverse = await post(app, tenant, 'CREDIT', moneyBody(tenant, usdAccount, service, 100, { currency: 'KES' })).expect(400);
      expect(inverse.body.message).toMatch(/KES\/USD exchange rate is stale/);
      expect(await balance(app, account)).toBe(balanceBefore);
      expect(await moneyFootprint(app, tenant.clientId)).toEqual(footprint);
      // GET /v1/fx leaves the stale rate out; other rates still show.
      const shown = (await fx().expect(200)).body.rates;
      expect(shown.USD).toBeUndefined();
      expect(shown.EUR).toEqual(sandboxRates.EUR);

      // A fresh rate (fx:set, or the next refresh) converts again; a rate just under the limit is still used.
      await app.get(FxService).setRate('KES', 'USD', new Money('128.5'), new Money('130.5'), 'test');
      await ageRates(1.99, `base_currency = 'KES' AND currency = 'USD'`);
      const credit = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, service, 1, { currency: 'USD' })).expect(201);
      expect(credit.body.transaction_amount).toBe('128.5000');
    });

    it('every rate stale → GET /v1/fx answers 404 for KES and the derived bases', async () => {
      await ageRates(3);
      expect((await fx().expect(404)).body.status_code).toBe(120);
      expect((await fx('?base_currency=USD').expect(404)).body.status_code).toBe(120);
      expect(await app.get(FxRefreshService).refreshIfDue(hour('2001-02-03T14:00:00Z'))).toBe(true);
      expect((await fx().expect(200)).body.rates).toEqual(sandboxRates);
    });
  });
});

/** A moment of a fixed past hour, so the refresh tests never depend on the clock (the start-up refresh uses it). */
function hour(iso: string): Date {
  return new Date(iso);
}
