import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { FxRefreshService } from '../../src/fx/fx-refresh.service';
import { FxService } from '../../src/fx/fx.service';
import { OpenExchangeRatesSource } from '../../src/fx/open-exchange-rates.source';
import { closeTogether, createGatewayMerchant, gateway, IsolatedSandbox, startIsolatedSandbox, waitFor } from '../support/gateway-fixtures';
import { OpenExchangeRatesStub, type OxrAnswer } from '../support/openexchangerates-stub';
import { walletSet } from '../support/money-fixtures';
import { createTenant, dataSource } from '../support/test-app';

/**
 * The documented `latest.json` answer (docs.openexchangerates.org "latest.json": disclaimer, license, unix
 * `timestamp`, `base` USD on the free plan, `rates` as JSON numbers), with KES written with more digits than a JS
 * float keeps, and a currency we do not accept.
 */
const LATEST = `{"disclaimer":"Usage subject to terms: https://openexchangerates.org/terms","license":"https://openexchangerates.org/license",
  "timestamp":{{timestamp}},"base":"USD","rates":{"BTC":0.0000123,"EUR":0.921234,"GBP":0.791,"KES":129.4567891234567891,"TZS":2650.5,"UGX":3712.25,"USD":1}}`;

/**
 * FX from Open Exchange Rates (provider contract §11, rails.md "FX: Open Exchange Rates"): the hourly refresh takes
 * USD-based mid rates, derives the bases we use as cross rates with FX_SPREAD_BPS either side, and a failed refresh
 * keeps the last rates and counts the failure. A database of its own: the test writes rates every other file reads.
 */
describe('FX from Open Exchange Rates', () => {
  let stub: OpenExchangeRatesStub;
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  const config = () => ({ baseUrl: stub.baseUrl, appId: 'oxr-test-app-id', spreadBps: 50 });

  beforeAll(async () => {
    stub = await new OpenExchangeRatesStub(LATEST, 'oxr-test-app-id').start();
    sandbox = await startIsolatedSandbox({
      FX_SOURCE: 'openexchangerates',
      OPENEXCHANGERATES_BASE_URL: stub.baseUrl,
      OPENEXCHANGERATES_APP_ID: 'oxr-test-app-id',
      FX_SPREAD_BPS: '50',
    });
    app = sandbox.app;
  });
  afterAll(async () => {
    await closeTogether(
      () => sandbox?.close(),
      () => stub?.close(),
    );
  });

  const kesRates = () =>
    dataSource(app).query(`SELECT currency, buying, selling, source FROM fx_rates WHERE base_currency = 'KES' ORDER BY currency`);
  const metric = async (name: string): Promise<number | null> => {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(' ')[1]) : null;
  };

  it('the worker refreshes at start-up: KES cross rates exact to the 4th decimal, 50 bps either side of the mid', async () => {
    await waitFor('the start-up refresh', async () => {
      const [row] = await dataSource(app).query(`SELECT source FROM fx_refreshes WHERE completed_at IS NOT NULL`);
      return row?.source === 'openexchangerates';
    });
    expect(stub.appIds[0]).toBe('oxr-test-app-id');
    const rows = await kesRates();
    // KES per EUR = (KES per USD) / (EUR per USD) = 129.4567891234567891 / 0.921234 = 140.52541387…
    const four = (r: { currency: string; buying: string; selling: string }) => [
      r.currency,
      new Decimal(r.buying).toFixed(4, Decimal.ROUND_DOWN),
      new Decimal(r.selling).toFixed(4, Decimal.ROUND_DOWN),
    ];
    expect(rows.map(four)).toEqual([
      ['EUR', '139.8227', '141.2280'],
      ['GBP', '162.8438', '164.4804'],
      ['TZS', '0.0485', '0.0490'],
      ['UGX', '0.0346', '0.0350'],
      ['USD', '128.8095', '130.1040'],
    ]);
    expect(rows.every((r: { source: string }) => r.source === 'openexchangerates')).toBe(true);
    // Stored to 8 decimals, rounded away from us: we buy below the mid and sell above it.
    expect(rows.find((r: { currency: string }) => r.currency === 'EUR')).toMatchObject({ buying: '139.82278680', selling: '141.22804095' });

    const merchant = await createGatewayMerchant(app);
    const res = await gateway(app, merchant.token).get('/v1/fx').expect(200);
    expect(res.body.rates.USD).toEqual({ buying: '128.80950517', selling: '130.10407307' });
    expect(await metric('paygate_fx_rates_age_seconds')).toBeLessThan(60);
  });

  it('a currency a merchant’s wallet holds becomes a base of its own at the next refresh', async () => {
    const tenant = await createTenant(app);
    await (await walletSet(app, tenant)).create({ currency: 'UGX' });
    expect(await app.get(FxRefreshService).refreshIfDue(new Date('2001-02-01T10:00:00Z'))).toBe(true);
    const bases = await dataSource(app).query(`SELECT DISTINCT base_currency AS base FROM fx_rates ORDER BY 1`);
    expect(bases.map((r: { base: string }) => r.base)).toEqual(['KES', 'UGX']);
    // UGX per KES = 3712.25 / 129.4567891234567891 = 28.67559148…
    const [kes] = await dataSource(app).query(`SELECT buying, selling FROM fx_rates WHERE base_currency = 'UGX' AND currency = 'KES'`);
    expect(kes).toEqual({ buying: '28.53221352', selling: '28.81896945' });
  });

  it('reads the answer’s numbers losslessly', async () => {
    const source = new OpenExchangeRatesSource(config(), 7_200_000);
    const before = stub.ratesJson;
    stub.ratesJson = `{"timestamp":{{timestamp}},"base":"USD","rates":{"XAF":98765432109876.54321,"KES":129.5}}`;
    try {
      const xaf = (await source.fetchRates(['XAF'])).find((r) => r.currency === 'USD')!;
      // Through a float the mid would be 98765432109876.55 and the buying rate …327.16725.
      expect(xaf.buying.toFixed()).toBe('98271604949327.16049395');
    } finally {
      stub.ratesJson = before;
    }
  });

  describe('a failed refresh keeps the last rates and counts the failure', () => {
    const cases: Array<[string, { answer?: OxrAnswer; ageSeconds?: number; appId?: string }, RegExp, string]> = [
      ['an HTTP 500', { answer: 'http500' }, /HTTP 500/, '2001-01-01T10:00:00Z'],
      // The documented error bodies ("Errors": {error: true, status, message, description}): the message is named.
      [
        'an app id Open Exchange Rates refuses (401 invalid_app_id)',
        { appId: 'revoked-app-id' },
        /HTTP 401 invalid_app_id$/,
        '2001-01-05T10:00:00Z',
      ],
      ['a plan without the route (429 not_allowed)', { answer: 'not_allowed' }, /HTTP 429 not_allowed$/, '2001-01-06T10:00:00Z'],
      [
        'access restricted for over-use (403 access_restricted)',
        { answer: 'access_restricted' },
        /HTTP 403 access_restricted$/,
        '2001-01-07T10:00:00Z',
      ],
      ['no answer within the time-out', { answer: 'silence' }, /did not answer: TimeoutError/, '2001-01-02T10:00:00Z'],
      ['an answer that is not JSON', { answer: 'garbage' }, /not JSON/, '2001-01-03T10:00:00Z'],
      ['rates older than 2 hours', { ageSeconds: 3 * 3600 }, /180 minutes old/, '2001-01-04T10:00:00Z'],
    ];
    it.each(cases)('%s', async (_name, { appId, ...fault }, message, at) => {
      const source = new OpenExchangeRatesSource({ ...config(), appId: appId ?? config().appId }, 7_200_000, 300);
      const refresh = new FxRefreshService(dataSource(app), app.get(FxService), source);
      const before = await dataSource(app).query(`SELECT * FROM fx_rates ORDER BY base_currency, currency`);
      const failures = (await metric('paygate_fx_refresh_failures_total')) ?? 0;
      Object.assign(stub, fault);
      try {
        await expect(refresh.refreshIfDue(new Date(at))).rejects.toThrow(message);
      } finally {
        Object.assign(stub, { answer: 'rates', ageSeconds: 0 });
      }
      expect(await dataSource(app).query(`SELECT * FROM fx_rates ORDER BY base_currency, currency`)).toEqual(before);
      expect(await metric('paygate_fx_refresh_failures_total')).toBe(failures + 1);
      // The claim was released: the next ask (with the right app id) refreshes the same hour.
      const fixed = new FxRefreshService(dataSource(app), app.get(FxService), new OpenExchangeRatesSource(config(), 7_200_000, 300));
      expect(await fixed.refreshIfDue(new Date(at))).toBe(true);
    });
  });
});
