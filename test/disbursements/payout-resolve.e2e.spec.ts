import { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  callbackLog,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  ReceivedCallback,
  startIsolatedSandbox,
  systemBalance,
  waitFor,
} from '../support/gateway-fixtures';
import {
  b2bBody,
  b2bStatusPath,
  BasicCredentials,
  bankPayoutBody,
  cliJson,
  CliResult,
  createPayoutMerchant,
  entriesSince,
  expectedFloat,
  expectPayoutAnswer,
  expectSignedCallback,
  FloatBalance,
  floatBalance,
  journalEntries,
  minus,
  mobilePayoutBody,
  PAYOUT_PATHS,
  plus,
  runCli,
  SANDBOX,
  setPayoutsCallback,
  statusPath,
  waitForPayoutStatus,
} from '../support/disbursement-fixtures';

/**
 * The operator resolves a jammed payout by hand (issue 9 "Build" 8; provider contract §8
 * `payout:resolve --client CODE --reference REF --status SUCCESSFUL|FAILED`): each resolution is one ledger entry
 * (settle or release of the hold), the balances are exact, the merchant is called back, and a payout that already
 * has its result is refused.
 */
describe('admin payout:resolve', () => {
  // Each CLI run boots the application (seconds each on a loaded machine), and some tests run several.
  jest.setTimeout(240_000);

  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let basic: BasicCredentials;

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../scripts/lib/build').ensureBuilt();
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '200', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
    merchant = await createPayoutMerchant(app, { float: '10000' });
    basic = await setPayoutsCallback(app, merchant, receiver.url('/b2c-notifications'));
  }, 120_000);
  afterAll(async () => sandbox?.close());

  const gw = () => gateway(app, merchant.token);
  const resolve = (reference: string, status: string, client = merchant.clientCode) =>
    runCli(sandbox.db.url, 'payout:resolve', '--client', client, '--reference', reference, '--status', status, '--json');

  const entries = () => journalEntries(app, merchant.clientId);

  async function receivedAt(url: string): Promise<ReceivedCallback[]> {
    return waitFor(`a callback at ${url}`, () => (receiver.at(url).length > 0 ? receiver.at(url) : undefined));
  }

  function expectRefused(result: CliResult) {
    expect(result.code).not.toBe(0);
    expect(result.stdout.trim()).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr.trim().length).toBeGreaterThan(0);
  }

  /** A payout to a jammed number, waited until it reads 704; its amount + fee are then held. */
  async function jammed(body: Record<string, unknown>, path: string = PAYOUT_PATHS.local, b2b = false) {
    body.callback_url = receiver.url();
    const reference = body.payout_reference as string;
    expectPayoutAnswer(await gw().post(path).send(body), 720, reference);
    await waitForPayoutStatus(app, merchant, reference, 704, { b2b });
    // Callbacks are written with the status they tell: a jammed payout has none.
    expect((await callbackLog(app, merchant, reference)).deliveries).toEqual([]);
    expect(receiver.at(body.callback_url as string)).toHaveLength(0);
    return { reference, url: body.callback_url as string };
  }

  it('SUCCESSFUL on a jammed payout: one settle entry, reserved drops, available unchanged, fee earned, callback 700', async () => {
    const { reference, url } = await jammed(
      mobilePayoutBody(merchant, 'jammed', { sender_amount: '321.0987', recipient_amount: '321.0987' }),
    );
    const before: FloatBalance = await floatBalance(app, merchant);
    const fee = await systemBalance(app, merchant.clientId, 'FEE_INCOME');
    const entriesBefore = await entries();

    const out = cliJson(await resolve(reference, 'SUCCESSFUL'));
    expect(JSON.stringify(out)).toContain(reference);

    expect((await gw().get(statusPath(reference)).expect(200)).body.data.payment_status).toBe(700);
    expect(await entriesSince(app, merchant.clientId, entriesBefore)).toEqual(['FLOAT_SETTLE']);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(before.balance, minus(before.reserved_balance, '331.0987')));
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(plus(fee, 10));

    const [callback] = await receivedAt(url);
    expectSignedCallback(callback, merchant, basic);
    expect(callback.body).toMatchObject({
      payout_reference: reference,
      data: { payment_status: 700, amount: '321.0987', transaction_cost: '10.0000' },
    });
  });

  it('FAILED on a jammed payout: one release entry, amount + fee back in the available balance, callback 701', async () => {
    const { reference, url } = await jammed(bankPayoutBody(merchant, 'jammed', { sender_amount: '45.6789', recipient_amount: '45.6789' }));
    const before = await floatBalance(app, merchant);
    const fee = await systemBalance(app, merchant.clientId, 'FEE_INCOME');
    const entriesBefore = await entries();

    cliJson(await resolve(reference, 'FAILED'));

    expect((await gw().get(statusPath(reference)).expect(200)).body.data.payment_status).toBe(701);
    expect(await entriesSince(app, merchant.clientId, entriesBefore)).toEqual(['FLOAT_RELEASE']);
    expect(await floatBalance(app, merchant)).toEqual(
      expectedFloat(plus(before.balance, '55.6789'), minus(before.reserved_balance, '55.6789')),
    );
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe(fee);
    const [callback] = await receivedAt(url);
    expect(callback.body).toMatchObject({ payout_reference: reference, data: { payment_status: 701 } });
  });

  it('a jammed B2B payout resolves too (FAILED → 701, money back)', async () => {
    const { reference, url } = await jammed(
      b2bBody(merchant, { amount: '12.3456', recipient_account_number: SANDBOX.account.jammed }),
      PAYOUT_PATHS.b2b,
      true,
    );
    const before = await floatBalance(app, merchant);
    cliJson(await resolve(reference, 'FAILED'));
    expect((await gw().get(b2bStatusPath(reference)).expect(200)).body.payment_status).toBe(701);
    expect(await floatBalance(app, merchant)).toEqual(
      expectedFloat(plus(before.balance, '22.3456'), minus(before.reserved_balance, '22.3456')),
    );
    expect((await receivedAt(url))[0].body).toMatchObject({ payout_reference: reference, payment_status: 701 });
  });

  it('two operators resolving the same payout at once: one wins, one entry, the other is refused', async () => {
    const { reference } = await jammed(mobilePayoutBody(merchant, 'jammed', { sender_amount: '5', recipient_amount: '5' }));
    const before = await floatBalance(app, merchant);
    const entriesBefore = await entries();
    const results = await Promise.all([resolve(reference, 'SUCCESSFUL'), resolve(reference, 'FAILED')]);
    expect(results.filter((r) => r.code === 0)).toHaveLength(1);
    expectRefused(results.find((r) => r.code !== 0)!);
    const added = await entriesSince(app, merchant.clientId, entriesBefore);
    expect(added).toHaveLength(1);
    const status = (await gw().get(statusPath(reference)).expect(200)).body.data.payment_status;
    expect(added[0]).toBe(status === 700 ? 'FLOAT_SETTLE' : 'FLOAT_RELEASE');
    expect(await floatBalance(app, merchant)).toEqual(
      status === 700
        ? expectedFloat(before.balance, minus(before.reserved_balance, 15))
        : expectedFloat(plus(before.balance, 15), minus(before.reserved_balance, 15)),
    );
  });

  describe('refusals change nothing', () => {
    async function expectUnchanged(run: () => Promise<CliResult>) {
      const before = { float: await floatBalance(app, merchant), entries: await entries() };
      expectRefused(await run());
      expect({ float: await floatBalance(app, merchant), entries: await entries() }).toEqual(before);
    }

    it('a payout the rail already settled (700) or failed (701) is final: both statuses refused', async () => {
      for (const [row, status] of [
        ['ok', 700],
        ['failed', 701],
      ] as const) {
        const body = mobilePayoutBody(merchant, row);
        expectPayoutAnswer(await gw().post(PAYOUT_PATHS.local).send(body), 720, body.payout_reference as string);
        await waitForPayoutStatus(app, merchant, body.payout_reference as string, status);
        await expectUnchanged(() => resolve(body.payout_reference as string, 'SUCCESSFUL'));
        await expectUnchanged(() => resolve(body.payout_reference as string, 'FAILED'));
        expect(
          (
            await gw()
              .get(statusPath(body.payout_reference as string))
              .expect(200)
          ).body.data.payment_status,
        ).toBe(status);
      }
    });

    it('a payout resolved by hand is not resolved again', async () => {
      const { reference } = await jammed(mobilePayoutBody(merchant, 'jammed'));
      cliJson(await resolve(reference, 'FAILED'));
      await expectUnchanged(() => resolve(reference, 'SUCCESSFUL'));
      await expectUnchanged(() => resolve(reference, 'FAILED'));
    });

    it('an unknown reference, another client’s payout, an unknown client or a bad --status are refused', async () => {
      const { reference } = await jammed(mobilePayoutBody(merchant, 'jammed'));
      const other = await createPayoutMerchant(app, { float: '0' });
      await expectUnchanged(() => resolve('no-such-payout', 'SUCCESSFUL'));
      await expectUnchanged(() => resolve(reference, 'SUCCESSFUL', other.clientCode));
      await expectUnchanged(() => resolve(reference, 'SUCCESSFUL', 'NO_SUCH_CLIENT'));
      await expectUnchanged(() => resolve(reference, 'REVERSED'));
      await expectUnchanged(() => resolve(reference, 'successful!'));
      // Still jammed and still resolvable by its own client.
      expect((await gw().get(statusPath(reference)).expect(200)).body.data.payment_status).toBe(704);
      cliJson(await resolve(reference, 'SUCCESSFUL'));
    });
  });
});
