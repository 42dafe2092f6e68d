import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import request from 'supertest';
import {
  finishedCallbackLog,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  sleep,
  startIsolatedSandbox,
  systemBalance,
} from '../support/gateway-fixtures';
import {
  b2bBody,
  createPayoutMerchant,
  expectedFloat,
  expectPayoutAnswer,
  floatBalance,
  imtBody,
  localPayoutBody,
  mobilePayoutBody,
  PAYOUT_PATHS,
  plus,
  statusPath,
  storedCounts,
  waitForPayoutStatus,
} from '../support/disbursement-fixtures';
import { dataSource } from '../support/test-app';

/**
 * Payouts under concurrency (issue 9 "Tests"; provider contract §3 invariants, §5 idempotency): identical requests
 * racing make one payout, and a float that covers N payouts accepts exactly N of many racing ones, never going below
 * its floor. The app runs as `sandbox` (api + workers) on a database and redis-server of its own.
 */
describe('payouts racing on one float', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '200', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
  });
  afterAll(async () => sandbox?.close());

  /** Samples the available balance until stopped; every sample is kept. */
  function sampleAvailable(merchant: GatewayMerchant) {
    const samples: string[] = [];
    let running = true;
    const loop = (async () => {
      while (running) {
        samples.push((await floatBalance(app, merchant)).balance);
        await sleep(5);
      }
    })();
    return {
      async stop() {
        running = false;
        await loop;
        return samples;
      },
    };
  }

  it('20 identical payouts at once → one payout (720) and 19 × 722 DUPLICATE_IGNORED; the float is debited once, one callback', async () => {
    const merchant = await createPayoutMerchant(app, { float: '1000' });
    const body = mobilePayoutBody(merchant, 'ok', {
      sender_amount: '123.4567',
      recipient_amount: '123.4567',
      callback_url: receiver.url(),
    });
    const reference = body.payout_reference as string;
    const answers = await Promise.all(Array.from({ length: 20 }, () => gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(body)));

    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted).toHaveLength(1);
    expectPayoutAnswer(accepted[0], 720, reference);
    const duplicates = answers.filter((a) => a.status !== 200);
    expect(duplicates).toHaveLength(19);
    for (const duplicate of duplicates) expectPayoutAnswer(duplicate, 722, reference, 'DUPLICATE_IGNORED');

    expect(await storedCounts(app, merchant.clientId)).toMatchObject({ payouts: 1, holds: 1 });
    await waitForPayoutStatus(app, merchant, reference, 700);
    // The result's deliveries are written with the status: once each is final, every callback there will be was sent.
    const log = await finishedCallbackLog(app, merchant, reference);
    expect(log.deliveries).toEqual([expect.objectContaining({ url: body.callback_url, status: 'DELIVERED', attempts: 1 })]);
    expect(receiver.at(body.callback_url as string)).toHaveLength(1);
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat('866.5433', 0));
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe('10.0000');
    // One reserve and one settle entry: nothing else moved money for this client after the funding.
    const kinds = await dataSource(app).query(
      `SELECT kind, count(*)::int AS n FROM journal_entries WHERE client_id = $1 GROUP BY kind ORDER BY kind`,
      [merchant.clientId],
    );
    expect(kinds.filter((k: { kind: string }) => k.kind !== 'WALLET_FUNDING')).toEqual([
      { kind: 'FLOAT_RESERVE', n: 1 },
      { kind: 'FLOAT_SETTLE', n: 1 },
    ]);
  });

  it('50 payouts at once against a float that covers exactly 10 → exactly 10 × 720 and 40 × 721 INSUFFICIENT_BALANCE, never below the floor', async () => {
    // 10 × (100 + fee 10) = 1,100.0000.
    const merchant = await createPayoutMerchant(app, { float: '1100' });
    const bodies = Array.from({ length: 50 }, () =>
      localPayoutBody(merchant, { sender_amount: '100', recipient_amount: '100', callback_url: receiver.url() }),
    );
    const sampler = sampleAvailable(merchant);
    const answers = await Promise.all(bodies.map((b) => gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(b)));
    const samples = await sampler.stop();

    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(accepted).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const a of accepted) expectPayoutAnswer(a, 720);
    for (const r of refused) expectPayoutAnswer(r, 721, undefined, 'INSUFFICIENT_BALANCE');
    for (const sample of samples) expect(new Decimal(sample).gte(0)).toBe(true);

    expect((await floatBalance(app, merchant)).balance).toBe('0.0000');
    expect(await storedCounts(app, merchant.clientId)).toMatchObject({ payouts: 10, holds: 10 });
    // The refused references were never stored.
    for (const r of refused) expectPayoutAnswer(await gateway(app, merchant.token).get(statusPath(r.body.payout_reference)), 723);

    const acceptedRefs = accepted.map((a) => a.body.payout_reference as string);
    await Promise.all(acceptedRefs.map((ref) => waitForPayoutStatus(app, merchant, ref, 700, { timeoutMs: 30_000 })));
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(0, 0));
    expect(await systemBalance(app, merchant.clientId, 'FEE_INCOME')).toBe('100.0000');
  });

  it('local, IMT and B2B payouts racing on one float each reserve their own amount + fee, exactly', async () => {
    const merchant = await createPayoutMerchant(app, { float: '100000' });
    const pending = { recipient_phone_number: '254700000002', recipient_account_number: '254700000002' };
    const bodies: Array<[keyof typeof PAYOUT_PATHS, Record<string, unknown>, string]> = [];
    for (let i = 0; i < 10; i++) {
      const local = `${100 + i}.0${i}01`;
      bodies.push(['local', localPayoutBody(merchant, { ...pending, sender_amount: local, recipient_amount: local }), local]);
      bodies.push(['imt', imtBody(merchant, { ...pending, sender_amount: '1000', recipient_amount: '7.70' }), '1000']);
      const b2b = `${i + 1}.9999`;
      bodies.push(['b2b', b2bBody(merchant, { recipient_account_number: '0000000002', amount: b2b }), b2b]);
    }
    const answers = await Promise.all(bodies.map(([kind, body]) => gateway(app, merchant.token).post(PAYOUT_PATHS[kind]).send(body)));
    expect(answers.map((a) => a.status)).toEqual(Array(30).fill(200));
    const reserved = plus(...bodies.map(([, , amount]) => amount), ...bodies.map(() => 10));
    expect(await floatBalance(app, merchant)).toEqual(expectedFloat(new Decimal(100000).minus(reserved), reserved));
  });

  it('concurrent payouts of two clients do not touch each other’s float', async () => {
    const [a, b] = await Promise.all([createPayoutMerchant(app, { float: '550' }), createPayoutMerchant(app, { float: '550' })]);
    const send = (m: GatewayMerchant) =>
      localPayoutBody(m, {
        sender_amount: '100',
        recipient_amount: '100',
        recipient_phone_number: '254700000003',
        recipient_account_number: '254700000003',
      });
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        const m = i % 2 === 0 ? a : b;
        return request(app.getHttpServer()).post(PAYOUT_PATHS.local).set('x-access-token', m.token).send(send(m));
      }),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(await floatBalance(app, a)).toEqual(expectedFloat('0', '550'));
    expect(await floatBalance(app, b)).toEqual(expectedFloat('0', '550'));
  });
});
