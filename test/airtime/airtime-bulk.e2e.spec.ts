import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import {
  airtimeCallbacksScheduled,
  AirtimeMerchant,
  airtimeBody,
  airtimeMoney,
  createAirtimeMerchant,
  FINAL,
  sendAirtime,
  sum,
  waitForProcessed,
} from '../support/airtime-fixtures';
import { IsolatedSandbox, MerchantReceiver, startIsolatedSandbox, waitFor } from '../support/gateway-fixtures';
import { dataSource } from '../support/test-app';

/** Recipient i of the bulk request: every tenth fails, stays processing or jams; the rest succeed. */
function recipient(i: number): {
  phone_number: string;
  amount: string;
  expected: number;
} {
  const suffix = { 0: '254700000001', 1: '254700000002', 2: '254700000003' }[i % 10];
  // Distinct numbers whose endings select the sandbox outcome; amounts with 4 decimals so fees round.
  const phone = suffix ? `${100 + Math.floor(i / 10)}${suffix}` : `2547${String(20_000_000 + i)}`;
  const amount = new Decimal(1 + (i % 97)).plus(new Decimal(i % 10_000).dividedBy(10_000)).toFixed(4);
  return {
    phone_number: i % 3 === 0 ? `+${phone}` : phone,
    amount,
    expected: { 0: 603, 1: 601, 2: 604 }[i % 10] ?? 602,
  };
}

/**
 * A 1,000-recipient airtime request with mixed outcomes (issue 9): after processing, the float equals the start
 * minus amount + fee of every successful and every still-held recipient, to the 4th decimal; each failed recipient
 * got exactly its amount + fee back in one entry; one callback per final recipient.
 */
describe('bulk airtime: 1,000 recipients with mixed outcomes', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: AirtimeMerchant;
  const recipients = Array.from({ length: 1000 }, (_, i) => recipient(i));
  // PERCENTAGE 1.5 %: fees round half-up to 4 decimals, per recipient.
  const fee = (amount: string) => new Decimal(amount).times('0.015').toDecimalPlaces(4, Decimal.ROUND_HALF_UP);
  const withFee = (r: { amount: string }) => new Decimal(r.amount).plus(fee(r.amount));

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100' });
    ({ app, receiver } = sandbox);
    merchant = await createAirtimeMerchant(app, receiver, {
      serviceOverrides: {
        transaction_fee_type: 'PERCENTAGE',
        transaction_fee: 1.5,
      },
    });
  });
  afterAll(async () => sandbox?.close());

  it('settles successes, refunds failures exactly and keeps pending and jammed held', async () => {
    const before = await airtimeMoney(app, merchant);
    const body = airtimeBody(
      recipients.map(({ phone_number, amount }) => ({ phone_number, amount })),
      { service_code: merchant.serviceCode },
    );
    const started = Date.now();
    const res = await sendAirtime(app, merchant, body);
    const acceptedMs = Date.now() - started;
    expect(res.status).toBe(200);
    const results = await waitForProcessed(app, merchant, body.reference, 240_000);
    console.log(`1,000-recipient airtime request: accepted in ${acceptedMs} ms, processed in ${Date.now() - started} ms`);

    expect(results.map((r) => r.service_status)).toEqual(recipients.map((r) => r.expected));
    const settled = sum(recipients.filter((r) => r.expected === 602).map(withFee));
    const held = sum(recipients.filter((r) => [601, 604].includes(r.expected)).map(withFee));
    const fees = sum(recipients.filter((r) => r.expected === 602).map((r) => fee(r.amount)));
    const after = await airtimeMoney(app, merchant);
    expect(after.float).toBe(new Decimal(before.float).minus(settled).minus(held).toFixed(4));
    expect(after.inFlight).toBe(new Decimal(before.inFlight).plus(held).toFixed(4));
    expect(after.feeIncome).toBe(new Decimal(before.feeIncome).plus(fees).toFixed(4));

    // Each failed recipient: its hold released by one entry crediting the float with exactly amount + fee.
    const refunds: Array<{
      position: number;
      entries: number;
      refunded: string;
    }> = await dataSource(app).query(
      `SELECT r.position, count(p.*)::int AS entries, sum(p.amount) AS refunded
       FROM airtime_recipients r JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id JOIN float_holds h ON h.client_id = r.client_id AND h.id = r.hold_id
       JOIN postings p ON p.client_id = h.client_id AND p.entry_id = h.outcome_entry_id AND p.account_id = h.float_account_id
       WHERE q.reference = $1 AND h.status = 'RELEASED' GROUP BY r.position ORDER BY r.position`,
      [body.reference],
    );
    const failed = recipients.map((r, i) => ({ ...r, position: i + 1 })).filter((r) => r.expected === 603);
    expect(
      refunds.map((r) => ({
        position: r.position,
        entries: r.entries,
        refunded: new Decimal(r.refunded).toFixed(4),
      })),
    ).toEqual(
      failed.map((r) => ({
        position: r.position,
        entries: 1,
        refunded: withFee(r).toFixed(4),
      })),
    );

    // One callback per final recipient (idempotency key: external_reference + phone_number), none for the held ones.
    const finals = results.filter((r) => FINAL.includes(r.service_status));
    expect(await airtimeCallbacksScheduled(app, merchant.clientId)).toBe(finals.length);
    await waitFor('one callback per final recipient', () => receiver.at(merchant.airtimeUrl!).length >= finals.length, 240_000);
    const callbacks = receiver.at(merchant.airtimeUrl!);
    expect(new Set(callbacks.map((c) => `${c.body.external_reference}|${c.body.phone_number}`)).size).toBe(finals.length);
  }, 600_000);
});
