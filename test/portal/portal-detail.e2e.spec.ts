import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { PaymentsRepository } from '../../src/collections/payments.repository';
import { createPayoutMerchant, mobilePayoutBody, PAYOUT_PATHS, payoutRow, waitForPayoutStatus } from '../support/disbursement-fixtures';
import {
  chargeBody,
  createGatewayMerchant,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  startIsolatedSandbox,
  waitFor,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';
import { binary, readWorkbook } from '../support/statement-readers';
import { dataSource } from '../support/test-app';

/** The text of an HTML page without its tags, spaces collapsed (entities that matter here decoded). */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ');

/**
 * The portal's pages over HTTP against the sandbox: payments show what the payer paid and the fee actually
 * charged (none for a failed one, the transaction charge when the payer bears it), amounts in the currency's
 * minor units; payment, payout and delivery detail pages (the callback's request and the receiver's answer);
 * search by reference, phone number or amount; CSV cells kept as text; statement download; the overview's charts
 * per day in the merchant's time zone; unknown addresses and other clients' records are the 404 page, with
 * the portal's navigation.
 */
describe('portal detail pages, money and search', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;
  let cookie: string;
  const ids: Record<string, string> = {};
  const refs: Record<string, string> = {};
  let callbackUrl: string;

  async function charge(name: string, overrides: Record<string, unknown>, status: number, who = merchant) {
    const body = chargeBody(who, overrides);
    const res = await gateway(app, who.token).post('/v1/mobile-money/charge').send(body).expect(200);
    await waitForPaymentStatus(app, who, res.body.charge_request_id, status);
    ids[name] = String(res.body.charge_request_id);
    refs[name] = body.external_reference as string;
  }

  async function payout(name: string, row: 'ok' | 'failed', status: number) {
    const body = mobilePayoutBody(merchant, row);
    await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body).expect(200);
    await waitForPayoutStatus(app, merchant, body.payout_reference as string, status);
    refs[name] = body.payout_reference as string;
    ids[name] = String((await payoutRow(app, merchant.clientId, refs[name]))!.id);
  }

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    merchant = await createPayoutMerchant(app); // FIXED fee 10
    other = await createGatewayMerchant(app);
    callbackUrl = receiver.url();
    await charge('payerPays', { amount: '100', add_transaction_charge: true, transaction_charge: '5', callback_url: callbackUrl }, 700);
    await charge('large', { amount: '999999.5', payer_msisdn: '254798765432' }, 700);
    await charge('failed', { amount: '75', payer_msisdn: '254700000001' }, 701);
    await charge('foreign', { amount: '100' }, 700, other);
    await payout('paid', 'ok', 700);
    await payout('declined', 'failed', 701);
    const login = await request(app.getHttpServer())
      .post('/portal/login')
      .type('form')
      .send({ username: merchant.tenant.username, password: merchant.tenant.password })
      .expect(303);
    cookie = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
  });
  afterAll(async () => sandbox?.close());

  const get = (path: string) => request(app.getHttpServer()).get(path).set('cookie', cookie);
  const rowOf = (html: string, reference: string) => {
    const row = [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]).find((r) => r.includes(reference));
    return row === undefined ? undefined : textOf(row).trim();
  };

  it('lists what the payer paid and the fee charged: the transaction charge when the payer bears it, none when it failed', async () => {
    const html = (await get('/portal/payments').expect(200)).text;
    expect(rowOf(html, refs.payerPays)).toMatch(/KES 105\.00 KES 5\.00 Successful/);
    expect(rowOf(html, refs.large)).toMatch(/KES 999,999\.50 KES 10\.00 Successful/);
    expect(rowOf(html, refs.failed)).toMatch(/KES 75\.00 — Failed/);
    expect(html).toContain('<td data-label="Amount" class="num">');
  });

  it('a payment page shows every figure of the payment; failed, it cost no fee', async () => {
    const page = textOf((await get(`/portal/payments/${ids.payerPays}`).expect(200)).text);
    expect(page).toContain('Paid by the payer KES 105.00');
    expect(page).toContain('Amount KES 100.00');
    expect(page).toContain('Transaction charge (paid by the payer) KES 5.00');
    expect(page).toContain('Fee charged KES 5.00');
    expect(page).toContain('Received in the settlement wallet KES 100.00');
    const large = textOf((await get(`/portal/payments/${ids.large}`).expect(200)).text);
    expect(large).toContain('Received in the settlement wallet KES 999,989.50');
    const failed = textOf((await get(`/portal/payments/${ids.failed}`).expect(200)).text);
    expect(failed).toContain('Fee charged —');
    expect(failed).toContain('Received in the settlement wallet —');
  });

  it('a payout page shows the recipient and the fee charged; a failed payout cost none', async () => {
    const paid = textOf((await get(`/portal/payouts/${ids.paid}`).expect(200)).text);
    expect(paid).toContain(refs.paid);
    expect(paid).toContain('Fee charged KES 10.00');
    expect(paid).toContain('Recipient Wanjiku Kamau');
    expect(paid).toContain('Amount KES 100.00');
    const declined = textOf((await get(`/portal/payouts/${ids.declined}`).expect(200)).text);
    expect(declined).toContain('Fee charged —');
    const list = (await get('/portal/payouts').expect(200)).text;
    expect(rowOf(list, refs.declined)).toMatch(/KES 100\.00 — Failed/);
  });

  it("a delivery page shows the callback's request body and each attempt's response body", async () => {
    await waitFor('the callback to be delivered', () => (receiver.at(callbackUrl).length > 0 ? true : undefined));
    const [delivery] = await waitFor('the delivery to be recorded', async () => {
      const rows = await dataSource(app).query(
        `SELECT d.id FROM callback_deliveries d JOIN callback_attempts a ON a.delivery_id = d.id WHERE d.client_id = $1 AND d.reference = $2`,
        [merchant.clientId, refs.payerPays],
      );
      return rows.length > 0 ? rows : undefined;
    });
    const page = textOf((await get(`/portal/deliveries/${delivery.id}`).expect(200)).text);
    expect(page).toContain('Request body');
    expect(page).toContain(`"external_reference": "${refs.payerPays}"`);
    expect(page).toContain('"acknowledgement_code": "900"');
    expect(page).toContain(`"acknowledgement_description": "received ${refs.payerPays}"`);
  });

  it('search finds by reference start, by phone number (or part of it) and by exact amount', async () => {
    const found = async (q: string) => {
      const html = (await get(`/portal/payments?q=${encodeURIComponent(q)}`).expect(200)).text;
      return Object.keys(refs).filter((name) => html.includes(`<code>${refs[name]}</code>`));
    };
    expect(await found(refs.failed.slice(0, 12))).toEqual(['failed']);
    expect(await found('98765')).toEqual(['large']);
    expect(await found('+254798765432')).toEqual(['large']);
    expect(await found('999,999.50')).toEqual(['large']);
    expect(await found('105')).toEqual(['payerPays']); // what the payer paid
    expect(await found('100')).toEqual(['payerPays']); // the amount asked
    expect(await found('nothing-like-it')).toEqual([]);
    const payouts = (await get(`/portal/payouts?q=254700000001`).expect(200)).text;
    expect(payouts).toContain(refs.declined);
    expect(payouts).not.toContain(refs.paid);
  });

  it('the CSV keeps ids, references and phone numbers as text a spreadsheet shows as is, amounts as numbers', async () => {
    const csv = (await get(`/portal/payments.csv?q=254798765432`).expect(200)).text;
    const [, line] = csv.split('\r\n');
    expect(line).toContain(`"=""${ids.large}""",`);
    expect(line).toContain(`,"=""254798765432""",KES,999999.5000,10.0000,700,`);
  });

  it('downloads a statement of the float from the portal; a bad period or another wallet is a page saying so', async () => {
    const statements = (await get('/portal/statements').expect(200)).text;
    expect(statements).toContain(`<option value="${merchant.settlementAccountNumber}">`);
    const query = `account_number=${merchant.settlementAccountNumber}&start_date=2000-01-01&end_date=2100-01-01`;
    const xlsx = await get(`/portal/statements/download?${query}&doc_type=EXCEL`).buffer(true).parse(binary).expect(200);
    expect(xlsx.headers['content-disposition']).toMatch(/^attachment; filename="statement-/);
    const { rows } = await readWorkbook(xlsx.body);
    expect(rows.map((r) => r.reference)).toEqual(expect.arrayContaining([refs.paid, refs.payerPays]));
    const pdf = await get(`/portal/statements/download?${query}&doc_type=PDF`).buffer(true).parse(binary).expect(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    const bad = await get(`/portal/statements/download?${query}&doc_type=WORD`).expect(400);
    expect(textOf(bad.text)).toContain('doc_type must be one of the following values: EXCEL, PDF');
    const foreign = await get(
      `/portal/statements/download?${query.replace(merchant.settlementAccountNumber, other.settlementAccountNumber)}&doc_type=PDF`,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.headers['content-type']).toContain('text/html');
  });

  it('the overview charts collections and payouts per day of the last 7 or 30 days, in the time zone the merchant sets', async () => {
    const week = (await get('/portal').expect(200)).text;
    expect(week).toContain('aria-label="Collections volume per day, KES"');
    expect(week).toContain('aria-label="Payouts volume per day, KES"');
    expect((week.match(/<rect /g) ?? []).length).toBe(4 * 7); // volume and count bars of both kinds
    const month = (await get('/portal?days=30').expect(200)).text;
    expect((month.match(/<rect /g) ?? []).length).toBe(4 * 30);
    expect(textOf(month)).toContain('KES 1,000,104.50'); // successful collections: 105 + 999,999.50

    const csrf = /name="_csrf" value="([^"]+)"/.exec(week)![1];
    const post = (zone: string) =>
      request(app.getHttpServer()).post('/portal/time-zone').set('cookie', cookie).type('form').send({ time_zone: zone, _csrf: csrf });
    await post('Mars/Olympus_Mons').expect(400);
    await post('Pacific/Kiritimati').expect(303).expect('location', '/portal?notice=time-zone');
    const [row] = await dataSource(app).query(`SELECT time_zone FROM clients WHERE id = $1`, [merchant.clientId]);
    expect(row.time_zone).toBe('Pacific/Kiritimati');
    expect(textOf((await get('/portal').expect(200)).text)).toContain('Pacific/Kiritimati');

    // The same payments fall on the day each zone is on now (Kiritimati is 25 hours ahead of Pago Pago).
    const dayIn = (timeZone: string) => new Intl.DateTimeFormat('en-CA', { timeZone }).format(new Date());
    const payments = app.get(PaymentsRepository);
    for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      const days = await payments.dailyTotals(dataSource(app).manager, merchant.clientId, zone, 7);
      expect(days.map((d) => [d.day, d.count])).toEqual([[dayIn(zone), 3]]);
    }
  });

  it("unknown addresses, unknown ids and other clients' records are the 404 page, with the portal's navigation", async () => {
    for (const path of [
      '/portal/nope',
      '/portal/payments/99999999',
      `/portal/payments/${ids.foreign}`,
      '/portal/payments/x',
      '/portal/payouts/1x',
    ]) {
      const res = await get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.text).toContain('<nav aria-label="Portal">');
      expect(res.text).toContain('There is nothing of yours at this address.');
      expect(res.text).not.toContain(refs.foreign);
    }
    await request(app.getHttpServer()).get('/portal/nope').expect(303).expect('location', '/portal/login');
  });
});
