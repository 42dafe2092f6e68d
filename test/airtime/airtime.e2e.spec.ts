import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { AirtimeProcessingService } from '../../src/airtime/airtime-processing.service';
import { OUTBOX_CHANNEL } from '../../src/infra/queue/outbox-relay.service';
import {
  airtimeCallbacksScheduled,
  AIRTIME_SANDBOX,
  AirtimeMerchant,
  airtimeBody,
  airtimeMoney,
  airtimeStatus,
  airtimeStored,
  createAirtimeMerchant,
  expectAuthenticAirtimeCallback,
  FINAL,
  sendAirtime,
  sum,
  waitForProcessed,
} from '../support/airtime-fixtures';
import { floatBalance } from '../support/disbursement-fixtures';
import { IsolatedSandbox, MerchantReceiver, startIsolatedSandbox, stopClaiming, waitFor } from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Bulk airtime end to end in the sandbox (disbursement document "Airtime", §3, §6, §7; provider contract §5, §7
 * airtime column, §10): every row of the sandbox table, the money of each outcome, one signed callback per final
 * recipient, the status query and its tenancy, the default airtime service, and a processing job run again.
 */
describe('bulk airtime end to end (sandbox provider)', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '200', CALLBACK_RETRY_DELAYS_MS: '300,600,900' });
    ({ app, receiver } = sandbox);
  });
  afterAll(async () => sandbox?.close());

  describe('one recipient per row of the sandbox table', () => {
    let merchant: AirtimeMerchant;
    let reference: string;
    let before: Awaited<ReturnType<typeof airtimeMoney>>;
    let afterAcceptance: Awaited<ReturnType<typeof airtimeMoney>>;
    let results: Array<Record<string, any>>;
    const amounts = ['50', '75.5', 120, '10.0001', '99.9999', 30];
    const recipients = AIRTIME_SANDBOX.map((row, i) => ({ phone_number: i % 2 === 0 ? row.number : `+${row.number}`, amount: amounts[i] }));

    beforeAll(async () => {
      merchant = await createAirtimeMerchant(app, receiver);
      before = await airtimeMoney(app, merchant);
      const body = airtimeBody(recipients, { service_code: merchant.serviceCode });
      reference = body.reference;
      // The worker stops claiming, so the float is read before the processing refunds the failed recipient.
      const startClaiming = await stopClaiming(app);
      const res = await sendAirtime(app, merchant, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ reference, response_code: 720, response_description: expect.stringMatching(/\S/) });
      afterAcceptance = await airtimeMoney(app, merchant);
      startClaiming();
      results = await waitForProcessed(app, merchant, reference);
    });

    it('reserves amount + fee of every recipient from the float at acceptance, in one ledger entry', async () => {
      const total = sum(amounts.map((a) => new Decimal(a).plus(10)));
      expect(afterAcceptance.float).toBe(new Decimal(before.float).minus(total).toFixed(4));
      const [reservation] = await dataSource(app).query(
        `SELECT count(DISTINCT p.entry_id)::int AS entries FROM airtime_requests q
         JOIN float_reservations r ON r.client_id = q.client_id AND r.id = q.reservation_id
         JOIN postings p ON p.client_id = r.client_id AND p.entry_id = r.reserve_entry_id WHERE q.client_id = $1 AND q.reference = $2`,
        [merchant.clientId, reference],
      );
      expect(reservation.entries).toBe(1);
    });

    it.each(AIRTIME_SANDBOX.map((row, i) => [row.row, row.number, row.status, i] as const))(
      '%s (%s) ends in service_status %i',
      async (_row, number, status, i) => {
        const result = results[i];
        expect(result).toEqual({
          phone_number: recipients[i].phone_number,
          amount: new Decimal(amounts[i]).toNumber(),
          service_status: status,
          external_reference: reference,
          provider_reference: status === 602 ? expect.stringMatching(/^SBXA[0-9A-F]{10}$/) : null,
          correlation_id: expect.stringMatching(UUID),
          message: expect.stringMatching(/\S/),
        });
        expect(result.phone_number.replace('+', '')).toBe(number);
      },
    );

    it('moves the money of each outcome: success settles, failure refunds amount + fee, processing and jammed stay held', async () => {
      const withFee = (i: number) => new Decimal(amounts[i]).plus(10);
      const settled = sum(results.map((r, i) => (r.service_status === 602 ? withFee(i) : 0)));
      const held = sum(results.map((r, i) => ([601, 604].includes(r.service_status) ? withFee(i) : 0)));
      const successfulFees = 10 * results.filter((r) => r.service_status === 602).length;
      const after = await airtimeMoney(app, merchant);
      expect(after.float).toBe(new Decimal(before.float).minus(settled).minus(held).toFixed(4));
      expect(after.inFlight).toBe(new Decimal(before.inFlight).plus(held).toFixed(4));
      expect(after.feeIncome).toBe(new Decimal(before.feeIncome).plus(successfulFees).toFixed(4));
      // As the merchant reads it: available balance, and the held recipients as reserved.
      expect(await floatBalance(app, merchant)).toMatchObject({ balance: after.float, reserved_balance: held.toFixed(4) });
      const holds = await dataSource(app).query(
        `SELECT r.phone_number, h.status FROM airtime_recipients r JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id
         JOIN float_holds h ON h.client_id = r.client_id AND h.id = r.hold_id WHERE q.reference = $1 ORDER BY r.position`,
        [reference],
      );
      expect(holds.map((h: { status: string }) => h.status)).toEqual(['RELEASED', 'HELD', 'HELD', 'SETTLED', 'SETTLED', 'SETTLED']);
    });

    it('sends one signed callback per recipient that reached 602 or 603, equal to its status item, and none for 601/604', async () => {
      const finals = results.filter((r) => FINAL.includes(r.service_status));
      const callbacks = await waitFor('the final recipients’ callbacks', () =>
        receiver.at(merchant.airtimeUrl!).length >= finals.length ? receiver.at(merchant.airtimeUrl!) : undefined,
      );
      // Nothing more is scheduled for the held recipients.
      expect(await airtimeCallbacksScheduled(app, merchant.clientId)).toBe(finals.length);
      for (const callback of callbacks) expectAuthenticAirtimeCallback(callback, merchant);
      const byNumber = new Map(callbacks.map((c) => [c.body.phone_number as string, c.body]));
      for (const result of finals) expect(byNumber.get(result.phone_number)).toEqual(result);
      expect(new Set(callbacks.map((c) => c.headers['x-event-id'])).size).toBe(callbacks.length);
    });

    it('a processing job run again, or relayed again, changes nothing', async () => {
      const db = dataSource(app);
      const [{ id: requestId }] = await db.query(`SELECT id FROM airtime_requests WHERE reference = $1`, [reference]);
      const moneyBefore = await airtimeMoney(app, merchant);
      const storedBefore = await airtimeStored(app, merchant.clientId);
      const callbacksBefore = receiver.at(merchant.airtimeUrl!).length;

      const slice = { requestId: String(requestId), first: 1, last: recipients.length };
      // Twice in one group, and once more alone.
      expect(await app.get(AirtimeProcessingService).process(merchant.clientId, [slice, slice])).toEqual([true, true]);
      expect(await app.get(AirtimeProcessingService).process(merchant.clientId, [slice])).toEqual([true]);
      await db.query(
        `UPDATE outbox SET relayed_at = NULL, done_at = NULL, relay_count = relay_count + 1
         WHERE topic = 'airtime.process' AND payload->>'requestId' = $1`,
        [String(requestId)],
      );
      // Rows put back by hand wake the relay as the outbox's writers do (else its sweep finds them within 30 s).
      await db.query(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL]);
      await waitFor('the relayed jobs to run again', async () => {
        const rows = await db.query(`SELECT done_at FROM outbox WHERE topic = 'airtime.process' AND payload->>'requestId' = $1`, [
          String(requestId),
        ]);
        return rows.every((r: { done_at: Date | null }) => r.done_at !== null);
      });

      expect(await airtimeMoney(app, merchant)).toEqual(moneyBefore);
      expect(await airtimeStored(app, merchant.clientId)).toEqual(storedBefore);
      expect(receiver.at(merchant.airtimeUrl!)).toHaveLength(callbacksBefore);
      expect((await airtimeStatus(app, merchant, reference)).body).toEqual(results);
    });

    it('answers the status of another client’s reference, and of an unknown one, with 723 and no data', async () => {
      const other = await createAirtimeMerchant(app, null);
      for (const [who, ref] of [
        [other, reference],
        [merchant, `unknown-${reference}`],
      ] as const) {
        const res = await airtimeStatus(app, who, ref);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({
          reference: ref,
          response_code: 723,
          response_description: 'Record Not Found',
          error_code: 'RESOURCE_NOT_FOUND',
          message: expect.any(String),
        });
      }
    });
  });

  it('charges a PERCENTAGE fee per recipient, rounded half-up to 4 decimals, and refunds a failure to the 4th decimal', async () => {
    const merchant = await createAirtimeMerchant(app, receiver, {
      serviceOverrides: { transaction_fee_type: 'PERCENTAGE', transaction_fee: 2.5, minimum_transaction_amount: 0.0001 },
    });
    const before = await airtimeMoney(app, merchant);
    // 33.3333 × 2.5 % = 0.8333325 → 0.8333; 10.0002 × 2.5 % = 0.250005 → 0.2500 (half-up at the 4th decimal: 0.2500|05)
    const recipients = [
      { phone_number: '254711111111', amount: '33.3333' },
      { phone_number: '254700000001', amount: '10.0002' },
      { phone_number: '254722222222', amount: 0.0002 },
    ];
    const body = airtimeBody(recipients, { service_code: merchant.serviceCode });
    expect((await sendAirtime(app, merchant, body)).status).toBe(200);
    const results = await waitForProcessed(app, merchant, body.reference);
    expect(results.map((r) => r.service_status)).toEqual([602, 603, 602]);
    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(new Decimal(before.float).minus('33.3333').minus('0.8333').minus('0.0002').toFixed(4));
    expect(after.feeIncome).toBe(new Decimal(before.feeIncome).plus('0.8333').toFixed(4));
    expect(after.inFlight).toBe(before.inFlight);
  });

  describe('the paying service', () => {
    it('defaults to the client’s default airtime service when service_code is absent', async () => {
      const merchant = await createAirtimeMerchant(app, null);
      const body = airtimeBody([{ phone_number: '254733333333', amount: '5' }]);
      const refused = await sendAirtime(app, merchant, body);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ reference: body.reference, response_code: 721, error_code: 'SERVICE_NOT_ALLOWED' });

      await dataSource(app).query(`UPDATE client_services SET is_default_airtime = true WHERE code = $1`, [merchant.serviceCode]);
      const before = await airtimeMoney(app, merchant);
      expect((await sendAirtime(app, merchant, body)).status).toBe(200);
      expect((await waitForProcessed(app, merchant, body.reference)).map((r) => r.service_status)).toEqual([602]);
      expect((await airtimeMoney(app, merchant)).float).toBe(new Decimal(before.float).minus(15).toFixed(4));
    });

    it('refuses another client’s service and an inactive one with 721 SERVICE_NOT_ALLOWED, storing nothing', async () => {
      const merchant = await createAirtimeMerchant(app, null);
      const other = await createAirtimeMerchant(app, null);
      const inactive = await createAirtimeMerchant(app, null, { serviceOverrides: { is_active: 0 } });
      for (const [who, code] of [
        [merchant, other.serviceCode],
        [inactive, inactive.serviceCode],
      ] as const) {
        const stored = await airtimeStored(app, who.clientId);
        const body = airtimeBody([{ phone_number: '254733333333', amount: '5' }], { service_code: code });
        const res = await sendAirtime(app, who, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          reference: body.reference,
          response_code: 721,
          response_description: 'Invalid Service',
          error_code: 'SERVICE_NOT_ALLOWED',
          message: expect.any(String),
        });
        expect(await airtimeStored(app, who.clientId)).toEqual(stored);
      }
    });
  });

  it('without an airtime callback URL sends no callback; the status query still answers', async () => {
    const merchant = await createAirtimeMerchant(app, null);
    const body = airtimeBody([{ phone_number: '254744444444', amount: '7' }], { service_code: merchant.serviceCode });
    expect((await sendAirtime(app, merchant, body)).status).toBe(200);
    const [result] = await waitForProcessed(app, merchant, body.reference);
    expect(result.service_status).toBe(602);
    const [deliveries] = await dataSource(app).query(`SELECT count(*)::int AS n FROM callback_deliveries WHERE client_id = $1`, [
      merchant.clientId,
    ]);
    expect(deliveries.n).toBe(0);
  });
});
