import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { AirtimeProcessingService } from '../../../src/airtime/airtime-processing.service';
import { RECIPIENTS_PER_CALL } from '../../../src/rails/africastalking/africastalking-gateway';
import {
  AirtimeMerchant,
  airtimeBody,
  airtimeMoney,
  airtimeStatus,
  createAirtimeMerchant,
  sendAirtime,
} from '../../support/airtime-fixtures';
import { AfricasTalkingRecipientPlan, AfricasTalkingStub, DOCUMENTED } from '../../support/africastalking-stub';
import { EngineMetrics } from '../../../src/infra/metrics/engine-metrics';
import { RailHealth } from '../../../src/rails/rail-health';
import {
  AfricasTalkingSandbox,
  airtimeRecipients,
  startAfricasTalkingSandbox,
  statusCallbackEffects,
} from '../../support/africastalking-fixtures';
import { MerchantReceiver, waitFor } from '../../support/gateway-fixtures';
import { ledgerViolations } from '../../support/money-fixtures';
import { dataSource } from '../../support/test-app';

const FEE = '10';
let sequence = 0;
/** A fresh Kenyan number for each recipient, so the stub's counts are per recipient. */
const phone = () => `2547${String(10_000_000 + (((Date.now() % 1_000_000) * 37 + sequence++) % 90_000_000)).padStart(8, '0')}`;

/**
 * Issue 19 (airtime): bulk airtime through Africa's Talking, against its stub: recipients sent in calls of its
 * batch size with one requestId each; "Sent" is not success; the final status by callback or
 * query/transaction/find settles or releases each hold once; a top-up whose answer was lost is never sent again.
 */
describe("Africa's Talking airtime (stub)", () => {
  let sandbox: AfricasTalkingSandbox;
  let app: NestFastifyApplication;
  let stub: AfricasTalkingStub;
  let receiver: MerchantReceiver;
  let merchant: AirtimeMerchant;

  beforeAll(async () => {
    sandbox = await startAfricasTalkingSandbox();
    ({ app, stub, receiver } = sandbox);
    merchant = await createAirtimeMerchant(app, receiver);
  });
  afterEach(() => {
    stub.plan = () => ({});
    stub.callPlan = () => ({});
    stub.callbackShape = 'documented';
  });
  afterAll(async () => {
    if (app) expect(await ledgerViolations(app)).toEqual([]);
    await sandbox?.close();
  });

  /** Sends a request of these numbers (amount each) and waits until the provider was asked about all of them. */
  async function send(numbers: string[], amount = '100') {
    const body = airtimeBody(
      numbers.map((phone_number) => ({ phone_number, amount })),
      { service_code: merchant.serviceCode },
    );
    expect((await sendAirtime(app, merchant, body)).status).toBe(200);
    await waitFor('every recipient asked about', async () =>
      (await airtimeRecipients(app, body.reference)).every((r) => r.service_status !== 600) ? true : undefined,
    );
    return body.reference;
  }

  const statuses = async (reference: string, until: number[]) =>
    waitFor(
      `recipients of ${reference} to reach ${until.join(',')}`,
      async () => {
        const rows = await airtimeRecipients(app, reference);
        return rows.map((r) => r.service_status).join() === until.join() ? rows : undefined;
      },
      // Some recipients settle only through reconciliation rounds (a find after a back-off): slow on a loaded machine.
      45_000,
    );

  const merchantCallbacks = (reference: string) => receiver.forReference(reference);

  /** paygate_rail_unknown_answers_total for an airtime call. */
  const unknownAnswers = async (call: string) => {
    const metric = await app.get(EngineMetrics).registry.getSingleMetric('paygate_rail_unknown_answers_total')!.get();
    return metric.values.find((v) => v.labels.rail === 'airtime' && v.labels.call === call)?.value ?? 0;
  };

  it('tops up in calls of its batch size; Sent stays processing until Success (602) or Failed (603); Failed at send is 603', async () => {
    const [succeeds, failsLater, failsAtSend] = [phone(), phone(), phone()];
    stub.plan = (number) =>
      ({
        [`+${succeeds}`]: { callback: 'once', delayMs: 600 },
        [`+${failsLater}`]: { final: 'Failed', callback: 'once', delayMs: 600 },
        [`+${failsAtSend}`]: { sent: 'Failed' },
      })[number] as AfricasTalkingRecipientPlan;
    const before = await airtimeMoney(app, merchant);
    const calls = stub.sends.length;
    const reference = await send([succeeds, failsLater, failsAtSend]);

    // One call for the three; Sent is not success: both wait for their final status, their money held.
    expect(stub.sends.length).toBe(calls + 1);
    // Numbers in the international form, amounts as the documentation writes them.
    expect(stub.sends.at(-1)!.recipients).toEqual([
      { phoneNumber: `+${succeeds}`, amount: 'KES 100' },
      { phoneNumber: `+${failsLater}`, amount: 'KES 100' },
      { phoneNumber: `+${failsAtSend}`, amount: 'KES 100' },
    ]);
    const early = await airtimeRecipients(app, reference);
    expect(early.map((r) => [r.service_status, r.hold, r.operator_request_id === null])).toEqual([
      [601, 'HELD', false],
      [601, 'HELD', false],
      [603, 'RELEASED', true],
    ]);

    const rows = await statuses(reference, [602, 603, 603]);
    expect(rows.map((r) => [r.hold, r.outcome_entries])).toEqual([
      ['SETTLED', 1],
      ['RELEASED', 1],
      ['RELEASED', 1],
    ]);
    // The provider's requestId is the recipient's provider reference, kept on its rail request.
    expect(rows[0].provider_reference).toBe(stub.topUpOf(succeeds)!.requestId);
    expect(rows[0].operator_request_id).toBe(stub.topUpOf(succeeds)!.requestId);
    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(new Decimal(before.float).minus(100).minus(FEE).toFixed(4));
    expect(after.inFlight).toBe(before.inFlight);
    for (const number of [succeeds, failsLater, failsAtSend]) expect(stub.sentTo(number)).toBe(1);
    await waitFor('three merchant callbacks', () => (merchantCallbacks(reference).length === 3 ? true : undefined));
    expect(
      merchantCallbacks(reference)
        .map((c) => [c.body.phone_number, c.body.service_status])
        .sort(),
    ).toEqual(
      [
        [succeeds, 602],
        [failsLater, 603],
        [failsAtSend, 603],
      ].sort(),
    );
  });

  it('sends a bulk request in calls of at most its batch size, each number once', async () => {
    const numbers = Array.from({ length: RECIPIENTS_PER_CALL * 2 + 3 }, phone);
    const calls = stub.sends.length;
    const reference = await send(numbers, '5');
    await statuses(
      reference,
      numbers.map(() => 602),
    );
    const made = stub.sends.slice(calls);
    expect(made.every((call) => call.recipients.length <= RECIPIENTS_PER_CALL)).toBe(true);
    expect(made.flatMap((call) => call.recipients.map((r) => r.phoneNumber)).sort()).toEqual(numbers.map((n) => `+${n}`).sort());
    expect(new Set(made.map((call) => call.idempotencyKey)).size).toBe(made.length);
  });

  it('a refused call (400 with a reason) fails its recipients: amount and fee back to the float', async () => {
    stub.callPlan = () => ({ fault: 'refuse' });
    const before = await airtimeMoney(app, merchant);
    const number = phone();
    const reference = await send([number]);
    const [row] = await statuses(reference, [603]);
    expect(row.hold).toBe('RELEASED');
    expect((await airtimeStatus(app, merchant, reference)).body[0].message).toMatch(/Invalid amount/);
    expect(await airtimeMoney(app, merchant)).toEqual(before);
    expect(stub.sentTo(number)).toBe(1);
  });

  it('a call not taken (401, 503) is sent again later and tops up once', async () => {
    for (const fault of ['unauthorized', 'busy'] as const) {
      let first = true;
      stub.callPlan = () => {
        const plan = first ? { fault } : {};
        first = false;
        return plan;
      };
      const number = phone();
      const reference = await send([number]);
      expect((await airtimeRecipients(app, reference))[0].rail_state).toBe('BUSY');
      await statuses(reference, [602]);
      expect(stub.sentTo(number)).toBe(2);
      expect(stub.topUps.filter((t) => t.phoneNumber === `+${number}`)).toHaveLength(1);
    }
  });

  it('numbers refused at send ("None" for requestId) fail each recipient, however many: amount and fee back once', async () => {
    const refused = [phone(), phone(), phone()];
    stub.plan = () => ({ sent: 'Failed', errorMessage: 'Invalid phone number' });
    const before = await airtimeMoney(app, merchant);
    // Two requests: the refused numbers of both carry the same "None", which is no id.
    const first = await send(refused.slice(0, 2));
    const second = await send(refused.slice(2));
    for (const [reference, count] of [
      [first, 2],
      [second, 1],
    ] as const) {
      const rows = await statuses(reference, Array(count).fill(603));
      expect(rows.map((r) => [r.hold, r.outcome_entries, r.operator_request_id])).toEqual(Array(count).fill(['RELEASED', 1, null]));
      expect((await airtimeStatus(app, merchant, reference)).body[0].message).toMatch(/Invalid phone number/);
    }
    expect(await airtimeMoney(app, merchant)).toEqual(before);
  });

  it('a number typed with its + goes out the same; the documented callback (requestId and status, form) settles it', async () => {
    const number = phone();
    stub.plan = () => ({ callback: 'once' });
    const reference = await send([`+${number}`]);
    expect(stub.sends.at(-1)!.recipients).toEqual([{ phoneNumber: `+${number}`, amount: 'KES 100' }]);
    const [row] = await statuses(reference, [602]);
    const topUp = stub.topUpOf(number)!;
    expect(row.provider_reference).toBe(topUp.requestId);
    expect(stub.delivered.filter((d) => d.body.requestId === topUp.requestId).map((d) => d.body)).toEqual([
      { ...DOCUMENTED.statusCallback, requestId: topUp.requestId },
    ]);
    expect(await statusCallbackEffects(app, topUp.requestId)).toEqual(['APPLIED']);
    expect(stub.finds).not.toContain(topUp.requestId);
  });

  it("a call whose answer was lost after Africa's Talking took it is repeated under its key (a duplicate), and its callback settles it: topped up once", async () => {
    for (const fault of ['http500', 'timeout'] as const) {
      const number = phone();
      let calls = 0;
      stub.callPlan = () => (calls++ === 0 ? { fault } : {});
      stub.plan = () => ({ final: fault === 'http500' ? 'Success' : 'Failed' });
      const before = await airtimeMoney(app, merchant);
      const reference = await send([number]);
      const [row] = await statuses(reference, [fault === 'http500' ? 602 : 603]);
      const topUp = stub.topUpOf(number)!;
      expect(row.operator_request_id).toBe(topUp.requestId);
      // The repeat carried the same key and was answered as a duplicate: one top-up.
      const made = stub.sends.filter((call) => call.recipients.some((r) => r.phoneNumber === `+${number}`));
      expect(made.map((call) => call.idempotencyKey)).toEqual([made[0].idempotencyKey, made[0].idempotencyKey]);
      expect(stub.topUps.filter((t) => t.phoneNumber === `+${number}`)).toHaveLength(1);
      // Its callback came while its id was unknown; Africa's Talking's record of that id named this top-up.
      expect(await statusCallbackEffects(app, topUp.requestId)).toEqual(['UNMATCHED']);
      expect(stub.finds).toContain(topUp.requestId);
      const after = await airtimeMoney(app, merchant);
      expect(after.inFlight).toBe(before.inFlight);
      expect(after.float).toBe(fault === 'http500' ? new Decimal(before.float).minus(110).toFixed(4) : before.float);
    }
  });

  it("a call whose answer was lost before Africa's Talking took it is taken by its repeat, under the same key, once", async () => {
    const number = phone();
    let calls = 0;
    stub.callPlan = () => (calls++ === 0 ? { fault: 'http500', taken: false } : {});
    const reference = await send([number]);
    const [row] = await statuses(reference, [602]);
    expect(row.operator_request_id).toBe(stub.topUpOf(number)!.requestId);
    const made = stub.sends.filter((call) => call.recipients.some((r) => r.phoneNumber === `+${number}`));
    expect(made).toHaveLength(2);
    expect(made[1].idempotencyKey).toBe(made[0].idempotencyKey);
    expect(stub.topUps.filter((t) => t.phoneNumber === `+${number}`)).toHaveLength(1);
  });

  it('a lost answer whose callback is lost too stays held, repeated no more after the duplicate; jammed (604) after 24 h for airtime:resolve', async () => {
    const number = phone();
    let calls = 0;
    stub.callPlan = () => (calls++ === 0 ? { fault: 'http500' } : {});
    stub.plan = () => ({ callback: 'never' });
    const before = await airtimeMoney(app, merchant);
    const reference = await send([number]);
    const [sent] = await airtimeRecipients(app, reference);
    // Wait for the duplicate answer to its repeat, then for another reconciliation round.
    const rounds = await waitFor('the repeat answered as a duplicate', async () => {
      const [r] = await dataSource(app).query(`SELECT queries, request->'call'->>'taken' AS taken FROM rail_requests WHERE id = $1`, [
        sent.rail_request_id,
      ]);
      return r.taken === 'true' ? r.queries : undefined;
    });
    await waitFor('another round', async () => {
      const [r] = await dataSource(app).query(`SELECT queries FROM rail_requests WHERE id = $1`, [sent.rail_request_id]);
      return r.queries >= rounds + 1 ? true : undefined;
    });
    const [row] = await airtimeRecipients(app, reference);
    expect([row.service_status, row.hold, row.rail_state, row.operator_request_id]).toEqual([601, 'HELD', 'UNKNOWN', null]);
    expect(stub.sentTo(number)).toBe(2);
    expect(stub.topUps.filter((t) => t.phoneNumber === `+${number}`)).toHaveLength(1);

    // A day on, the top-up is jammed; the operator resolves it from Africa's Talking's dashboard.
    await dataSource(app).query(`UPDATE rail_requests SET created_at = now() - interval '25 hours', next_query_at = now() WHERE id = $1`, [
      row.rail_request_id,
    ]);
    await statuses(reference, [604]);
    await app.get(AirtimeProcessingService).resolveByOperator(merchant.clientId, reference, number, 'SUCCESSFUL');
    const [resolved] = await statuses(reference, [602]);
    expect(resolved.hold).toBe('SETTLED');
    expect((await airtimeMoney(app, merchant)).float).toBe(new Decimal(before.float).minus(110).toFixed(4));
    expect(stub.sentTo(number)).toBe(2);
  });

  it('callbacks twice, contradicting, or before the send was answered settle each recipient once', async () => {
    stub.callbackShape = 'full';
    const [twice, successThenFailed, failedThenSuccess, early] = [phone(), phone(), phone(), phone()];
    const plans: Record<string, AfricasTalkingRecipientPlan> = {
      [`+${twice}`]: { callback: 'twice' },
      [`+${successThenFailed}`]: { callback: 'contradicting' },
      [`+${failedThenSuccess}`]: { final: 'Failed', callback: 'contradicting' },
      [`+${early}`]: { callback: 'early' },
    };
    stub.plan = (number) => plans[number];
    const before = await airtimeMoney(app, merchant);
    const reference = await send([twice, successThenFailed, failedThenSuccess, early]);
    // The early callback came before we knew its requestId: unmatched; query/transaction/find settles it instead.
    const rows = await statuses(reference, [602, 602, 603, 602]);
    expect(rows.map((r) => r.outcome_entries)).toEqual([1, 1, 1, 1]);
    const effects = async (number: string) => statusCallbackEffects(app, stub.topUpOf(number)!.requestId);
    await waitFor('every callback kept', async () => ((await effects(failedThenSuccess)).length === 2 ? true : undefined));
    expect(await effects(twice)).toEqual(['APPLIED', 'REPEATED']);
    expect(await effects(successThenFailed)).toEqual(['APPLIED', 'REPEATED']);
    expect(await effects(failedThenSuccess)).toEqual(['APPLIED', 'REPEATED']);
    expect(await effects(early)).toEqual(['UNMATCHED']);
    expect(stub.finds).toContain(stub.topUpOf(early)!.requestId);
    expect(stub.delivered.every((d) => d.status === 200)).toBe(true);

    // One callback to the merchant per recipient, each written with its recipient's booking.
    const [deliveries] = await dataSource(app).query(
      `SELECT count(*)::int AS n, count(DISTINCT payload->>'phone_number')::int AS numbers FROM callback_deliveries WHERE reference = $1`,
      [reference],
    );
    expect(deliveries).toEqual({ n: 4, numbers: 4 });
    await waitFor('four merchant callbacks', () => (merchantCallbacks(reference).length >= 4 ? true : undefined));
    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(new Decimal(before.float).minus(new Decimal(110).times(3)).toFixed(4));
    expect(after.inFlight).toBe(before.inFlight);
  });

  it('a lost status callback is resolved by query/transaction/find', async () => {
    const number = phone();
    stub.plan = () => ({ final: 'Failed', callback: 'never' });
    const before = await airtimeMoney(app, merchant);
    const reference = await send([number]);
    const [row] = await statuses(reference, [603]);
    expect(stub.finds).toContain(row.operator_request_id);
    expect(await statusCallbackEffects(app, row.operator_request_id)).toEqual([]);
    expect(await airtimeMoney(app, merchant)).toEqual(before);
  });

  it('a forged status (unknown requestId, another number or value) changes nothing; an unreadable one is refused', async () => {
    const number = phone();
    stub.plan = () => ({ callback: 'never', delayMs: 60_000 });
    const reference = await send([number]);
    const topUp = stub.topUpOf(number)!;
    const before = await airtimeMoney(app, merchant);
    for (const forged of [
      { ...stub.statusOf(topUp, 'Failed'), requestId: 'ATQid_0000000000000000000000000000dead' },
      { ...stub.statusOf(topUp, 'Failed'), phoneNumber: '+254799999999' },
      { ...stub.statusOf(topUp, 'Failed'), value: 'KES 1000.0000' },
    ]) {
      expect(await stub.postStatus(forged)).toBe(200);
    }
    expect(await stub.postStatus({ requestId: 'ATQid_0000000000000000000000000000beef', status: 'Success' })).toBe(200);
    expect(await stub.postStatus({ status: 'Failed' })).toBe(400);
    expect(await stub.postStatus({ requestId: topUp.requestId })).toBe(400);
    // A status word we do not know: kept, counted, and the top-up stays held.
    const unknownBefore = await unknownAnswers('status-callback');
    expect(await stub.postStatus({ requestId: topUp.requestId, status: 'Queued' })).toBe(200);
    expect(await unknownAnswers('status-callback')).toBe(unknownBefore + 1);
    const [row] = await airtimeRecipients(app, reference);
    expect([row.service_status, row.hold, row.rail_outcome]).toEqual([601, 'HELD', null]);
    expect(await statusCallbackEffects(app, topUp.requestId)).toEqual(['UNMATCHED', 'UNMATCHED', 'UNMATCHED']);
    expect(await statusCallbackEffects(app, 'ATQid_0000000000000000000000000000dead')).toEqual(['UNMATCHED']);
    expect(await airtimeMoney(app, merchant)).toEqual(before);

    // The real status, with the value written differently, is believed.
    expect(await stub.postStatus({ ...stub.statusOf(topUp, 'Success'), value: 'KES 100' })).toBe(200);
    await statuses(reference, [602]);
  });

  it("while Africa's Talking keeps failing, its circuit opens: new requests are refused (503, 721 FAILED) and nothing is stored", async () => {
    stub.callPlan = () => ({ fault: 'busy' });
    // Requests are accepted and held until the busy answers open the circuit: the first one surely, the others until
    // then (the sends again of those held count against the circuit too, so it may open before the fifth).
    const held: string[] = [];
    const heldReferences: string[] = [];
    for (let i = 0; i < 5; i++) {
      const number = phone();
      const body = airtimeBody([{ phone_number: number, amount: '100' }], { service_code: merchant.serviceCode });
      const res = await sendAirtime(app, merchant, body);
      if (i > 0 && res.status === 503) break;
      expect(res.status).toBe(200);
      await waitFor('its recipient asked about', async () =>
        (await airtimeRecipients(app, body.reference)).every((r) => r.service_status !== 600) ? true : undefined,
      );
      held.push(number);
      heldReferences.push(body.reference);
    }
    await waitFor(
      'the circuit to open',
      async () => {
        const [row] = await dataSource(app).query(`SELECT open_until FROM rail_health WHERE rail = 'africastalking'`);
        return row?.open_until && new Date(row.open_until).getTime() > Date.now() ? true : undefined;
      },
      20_000,
    );
    // The api reads the circuit through a cache of a second: wait until it sees it open.
    await waitFor('the api to see the circuit open', async () =>
      (await app.get(RailHealth).refusal('africastalking')) ? true : undefined,
    );

    const before = await airtimeMoney(app, merchant);
    const body = airtimeBody([{ phone_number: phone(), amount: '100' }], { service_code: merchant.serviceCode });
    const refused = await sendAirtime(app, merchant, body);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.body).toMatchObject({ reference: body.reference, response_code: 721, error_code: 'FAILED' });
    expect(refused.body.message).toMatch(/airtime rail \(Africa's Talking\) is unavailable/);
    expect(await dataSource(app).query(`SELECT 1 FROM airtime_requests WHERE reference = $1`, [body.reference])).toEqual([]);
    expect(await airtimeMoney(app, merchant)).toEqual(before);

    // Africa's Talking is back and the circuit closed: the request held meanwhile tops up once.
    stub.callPlan = () => ({});
    await dataSource(app).query(`DELETE FROM rail_health WHERE rail = 'africastalking'`);
    await waitFor('the api to see the circuit closed', async () =>
      (await app.get(RailHealth).refusal('africastalking')) === null ? true : undefined,
    );
    for (const reference of heldReferences) await statuses(reference, [602]);
    expect(held.map((number) => stub.topUps.filter((t) => t.phoneNumber === `+${number}`).length)).toEqual(held.map(() => 1));
  });

  it('keeps its callback route out of the merchant OpenAPI document', async () => {
    const res = await app.inject({ method: 'GET', url: '/docs-json' });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json().paths).filter((path) => path.startsWith('/rails'))).toEqual([]);
    expect(Object.keys(res.json().paths)).toContain('/v1/gw/airtime/send');
  });
});
