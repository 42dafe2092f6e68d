import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import request from 'supertest';
import { FloatAlertsService } from '../../src/float/float-alerts.service';
import {
  cliJson,
  createPayoutMerchant,
  expectPayoutAnswer,
  floatBalance,
  fundFloat,
  mobilePayoutBody,
  PAYOUT_PATHS,
  runCli,
  SandboxRow,
  setPayoutsCallback,
  waitForPayoutStatus,
} from '../support/disbursement-fixtures';
import { gateway, GatewayMerchant, IsolatedSandbox, MerchantReceiver, startIsolatedSandbox, waitFor } from '../support/gateway-fixtures';
import { ledgerViolations } from '../support/money-fixtures';
import { airtimeBody, sendAirtime } from '../support/airtime-fixtures';
import { verifySignature } from '../support/callback-signature';
import { dataSource } from '../support/test-app';
import { activityView } from '../support/citus-cluster';

const CONTACT = '254711000222';

/**
 * Low-balance alerts on a float (issue 34, "Float alerts"): when the available balance falls below the merchant's
 * threshold, one signed float.low_balance callback to the payouts callback URL and one SMS to the contact; nothing
 * while it stays below; re-armed only once it is back at the threshold + 10%; one alert for payouts crossing
 * together; the portal's banner and form; the CLI.
 */
describe('float low-balance alerts', () => {
  jest.setTimeout(240_000);

  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
  }, 120_000);
  afterAll(async () => {
    if (app) expect(await ledgerViolations(app)).toEqual([]);
    await sandbox?.close();
  });

  /** A merchant with a float of `float` KES, its payouts callback on the receiver. */
  async function merchantWithFloat(float: string) {
    const merchant = await createPayoutMerchant(app, { float });
    const url = receiver.url();
    const basic = await setPayoutsCallback(app, merchant, url);
    return { merchant, url, basic };
  }

  async function payout(merchant: GatewayMerchant, amount: string, row: SandboxRow = 'ok') {
    const body = mobilePayoutBody(merchant, row, { sender_amount: amount, recipient_amount: amount });
    const res = await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body);
    expectPayoutAnswer(res, 720, body.payout_reference as string);
    return body.payout_reference as string;
  }

  /** The float.low_balance deliveries scheduled for the client: written with the money, so counted at once. */
  async function alertsScheduled(merchant: GatewayMerchant): Promise<number> {
    const [row] = await dataSource(app).query(
      `SELECT count(*)::int AS n FROM callback_deliveries WHERE client_id = $1 AND event = 'float.low_balance'`,
      [merchant.clientId],
    );
    return row.n;
  }

  const available = async (merchant: GatewayMerchant) => (await floatBalance(app, merchant)).balance;

  it('fires once per crossing of the available balance, stays quiet below, re-arms at threshold + 10%, fires again', async () => {
    const { merchant, url, basic } = await merchantWithFloat('1000');
    await app.get(FloatAlertsService).set(merchant.clientId, merchant.settlementAccountNumber, { threshold: '500', contact: CONTACT });

    await waitForPayoutStatus(app, merchant, await payout(merchant, '300'), 700); // 1000 - 310 = 690: above, paid out
    expect(await available(merchant)).toBe('690.0000');
    expect(await alertsScheduled(merchant)).toBe(0);

    // Held, not settled: the available balance crosses, the ledger balance (available + reserved) stays above.
    await payout(merchant, '300', 'pending'); // 380: crossed
    expect(await floatBalance(app, merchant)).toMatchObject({ balance: '380.0000', ledger_balance: '690.0000' });
    expect(await alertsScheduled(merchant)).toBe(1);

    await payout(merchant, '100'); // 270: still below
    await fundFloat(app, merchant, '250'); // 520: above the threshold, below 550 (threshold + 10%): not re-armed
    await payout(merchant, '50'); // 460: below again, but no new crossing
    expect(await available(merchant)).toBe('460.0000');
    expect(await alertsScheduled(merchant)).toBe(1);

    // A failed payout's hold comes back to the float (a release raises it) after its reservation took it lower.
    const failed = await payout(merchant, '100', 'failed'); // 350, then 460 again on the release
    await waitForPayoutStatus(app, merchant, failed, 701);
    await fundFloat(app, merchant, '90'); // 550: re-armed, silently
    expect(await available(merchant)).toBe('550.0000');
    expect(await alertsScheduled(merchant)).toBe(1);

    await payout(merchant, '50'); // 490: the second crossing
    expect(await alertsScheduled(merchant)).toBe(2);

    const alertsAt = () => receiver.at(url).filter((c) => c.body.event === 'float.low_balance');
    const received = await waitFor('both alerts at the payouts URL', () => alertsAt().length === 2 && alertsAt());
    for (const callback of received) {
      expect(verifySignature(merchant.signingSecret, callback.rawBody, callback.headers['x-signature'] as string)).toBe(true);
      expect(callback.headers.authorization).toBe(`Basic ${Buffer.from(`${basic.username}:${basic.password}`).toString('base64')}`);
    }
    expect(received.map((c) => c.body)).toEqual([
      {
        event: 'float.low_balance',
        account_number: merchant.settlementAccountNumber,
        currency: 'KES',
        available_balance: '380.0000',
        threshold: '500.0000',
        rearm_balance: '550.0000',
        service_codes: [merchant.serviceCode],
        alert_number: 1,
        crossed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
      expect.objectContaining({ available_balance: '490.0000', alert_number: 2 }),
    ]);

    // One SMS per alert, to the contact, through the notifications path (the sandbox notifier sends it).
    for (const [n, balance] of [
      [1, '380.00'],
      [2, '490.00'],
    ]) {
      const reference = `float-low-${merchant.settlementAccountNumber}-${n}`;
      const sms = await waitFor(`SMS ${reference} sent`, async () => {
        const text = JSON.stringify((await gateway(app, merchant.token).get(`/v1/notifications?reference=${reference}`).expect(200)).body);
        return text.includes('"SENT"') && text;
      });
      expect(sms).toContain(CONTACT);
      expect(sms).toContain(
        `Low float: account ${merchant.settlementAccountNumber} has KES ${balance} available, below your alert level of KES 500.00.`,
      );
    }
  });

  it('sends one alert when concurrent payouts and airtime cross together', async () => {
    const { merchant } = await merchantWithFloat('2000');
    await app.get(FloatAlertsService).set(merchant.clientId, merchant.settlementAccountNumber, { threshold: '1000' });
    // The race, staged: the float is held locked while payouts (one group at a time per process) and bulk airtime
    // (groups of their own) queue on it in Postgres, several transactions at once; then it is let go.
    const blocker = new Client({ connectionString: sandbox.db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM ledger_accounts WHERE client_id = $1 AND id = $2 FOR NO KEY UPDATE', [
        merchant.clientId,
        merchant.settlementAccountId,
      ]);
      const sent = Promise.all([
        ...Array.from({ length: 8 }, () => payout(merchant, '100')),
        ...Array.from({ length: 3 }, () =>
          sendAirtime(
            app,
            merchant,
            airtimeBody([{ phone_number: '254712345678', amount: '100' }], { service_code: merchant.serviceCode }),
          ).expect(200),
        ),
      ]);
      await waitFor('transactions of both kinds waiting on the float', async () => {
        const { rows } = await blocker.query(
          `SELECT count(*)::int AS n FROM ${activityView()}
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows[0].n >= 2;
      });
      await blocker.query('ROLLBACK');
      await sent;
    } finally {
      await blocker.end();
    }
    // 8 payouts and 3 airtime top-ups of 100, each with the fee 10: 2000 - 1210.
    expect(await available(merchant)).toBe('790.0000');
    expect(await alertsScheduled(merchant)).toBe(1);
  });

  describe('the portal', () => {
    const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

    async function signIn(merchant: GatewayMerchant): Promise<{ cookie: string; csrf: string }> {
      const login = await request(app.getHttpServer())
        .post('/portal/login')
        .type('form')
        .send({ username: merchant.tenant.username, password: merchant.tenant.password })
        .expect(303);
      const cookie = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
      const page = await request(app.getHttpServer()).get('/portal').set('cookie', cookie).expect(200);
      return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page.text)![1] };
    }

    it('sets the alert with its form, shows the banner once it fires, and refuses a bad threshold with a 400', async () => {
      const { merchant } = await merchantWithFloat('1000');
      const { cookie, csrf } = await signIn(merchant);
      const overview = async () => textOf((await request(app.getHttpServer()).get('/portal').set('cookie', cookie).expect(200)).text);
      const save = (form: Record<string, string>) =>
        request(app.getHttpServer())
          .post(`/portal/float-alerts/${merchant.settlementAccountNumber}`)
          .set('cookie', cookie)
          .type('form')
          .send({ _csrf: csrf, ...form });

      for (const threshold of ['-5', '0', '12.345', 'abc', '']) {
        const res = await save({ threshold });
        expect(res.status).toBe(400);
        expect(textOf(res.text)).toMatch(/The threshold must/);
      }
      expect((await save({ threshold: '100', sms: '12ab' })).status).toBe(400);
      expect(await app.get(FloatAlertsService).alertsOf(merchant.clientId)).toEqual([]);
      // Without the form's token the portal refuses, as for every form.
      expect((await save({ threshold: '100', _csrf: 'forged' })).status).toBe(403);

      expect((await save({ threshold: '600.50', sms: CONTACT })).headers.location).toBe('/portal?notice=alert-saved');
      expect(await overview()).toContain('Armed: fires below KES 600.50.');
      expect(await overview()).not.toContain('Low float:');

      await payout(merchant, '400'); // 590: crossed
      expect(await overview()).toContain(
        `Low float: the available balance of ${merchant.settlementAccountNumber} fell below your alert level of KES 600.50.`,
      );

      const clear = await request(app.getHttpServer())
        .post(`/portal/float-alerts/${merchant.settlementAccountNumber}/clear`)
        .set('cookie', cookie)
        .type('form')
        .send({ _csrf: csrf })
        .expect(303);
      expect(clear.headers.location).toBe('/portal?notice=alert-cleared');
      expect(await overview()).not.toContain('Low float:');
    });

    it("answers 404 for a float of another client's", async () => {
      const { merchant } = await merchantWithFloat('1000');
      const { merchant: other } = await merchantWithFloat('1000');
      const { cookie, csrf } = await signIn(merchant);
      await request(app.getHttpServer())
        .post(`/portal/float-alerts/${other.settlementAccountNumber}`)
        .set('cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, threshold: '100' })
        .expect(404);
      expect(await app.get(FloatAlertsService).alertsOf(other.clientId)).toEqual([]);
    });
  });

  it("admin float:alert sets the threshold of a service's float and float:alert-clear removes it", async () => {
    const { merchant } = await merchantWithFloat('1000');
    const cli = (...args: string[]) => runCli(sandbox.db.url, ...args, '--client', merchant.clientCode, '--service', merchant.serviceCode);

    const refused = await cli('float:alert', '--threshold', '10.001');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/at most 2 decimal places in KES/);

    expect(cliJson(await cli('float:alert', '--threshold', '2000', '--sms', CONTACT, '--json'))).toMatchObject({
      account_number: merchant.settlementAccountNumber,
      threshold: '2000.0000',
      rearm_balance: '2200.0000',
      contact_msisdn: CONTACT,
      // Set above the balance: low at once (the banner shows), without an alert, since nothing crossed.
      low: true,
      alerts: 0,
    });
    await payout(merchant, '10');
    expect(await alertsScheduled(merchant)).toBe(0);

    expect(cliJson(await cli('float:alert-clear', '--json'))).toMatchObject({ cleared: true });
    expect(await app.get(FloatAlertsService).alertsOf(merchant.clientId)).toEqual([]);
    expect((await cli('float:alert-clear')).code).toBe(1);
  });
});
