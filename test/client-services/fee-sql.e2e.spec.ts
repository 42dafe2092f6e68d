import { NestFastifyApplication } from '@nestjs/platform-fastify';
import fc from 'fast-check';
import { createService } from '../support/money-fixtures';
import { createTenant, createTestApp, dataSource, TestTenant } from '../support/test-app';

interface Schedule {
  hasTransactionFee: boolean;
  feeType: 'FIXED' | 'PERCENTAGE' | null;
  fee: string;
  tiers?: Array<[minimum: string, maximum: string, feeType: 'FIXED' | 'PERCENTAGE', fee: string]>;
}

/**
 * client_service_fee (src/client-services/sql/client_service_fee.sql) is the one fee rule (provider contract §4, §10):
 * every acceptance prices in Postgres (charges, checkout payments through collection_merchant_fee, payouts, airtime,
 * wallet money). The tier holding the amount when tiers exist, otherwise the service's FIXED amount or PERCENTAGE
 * (2.5 means 2.5 %), rounded half-up to 4 decimals; nothing without a fee.
 */
describe('client_service_fee', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let serviceId: string;

  beforeAll(async () => {
    app = await createTestApp();
    tenant = await createTenant(app);
    const code = await createService(app, tenant);
    [{ id: serviceId }] = await dataSource(app).query(`SELECT id FROM client_services WHERE client_id = $1 AND code = $2`, [
      tenant.clientId,
      code,
    ]);
  });
  afterAll(async () => app?.close());

  /** The service's fees on the amounts, once its fee schedule is `schedule` (set in place: any schedule the table holds). */
  async function fees(schedule: Schedule, amounts: string[]): Promise<string[]> {
    const db = dataSource(app);
    await db.query(`UPDATE client_services SET has_transaction_fee = $2, transaction_fee_type = $3, transaction_fee = $4 WHERE id = $1`, [
      serviceId,
      schedule.hasTransactionFee,
      schedule.feeType,
      schedule.fee,
    ]);
    await db.query(`DELETE FROM client_service_fee_tiers WHERE client_service_id = $1`, [serviceId]);
    for (const [minimum, maximum, feeType, fee] of schedule.tiers ?? []) {
      await db.query(
        `INSERT INTO client_service_fee_tiers (client_id, client_service_id, minimum_amount, maximum_amount, fee_type, fee)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [tenant.clientId, serviceId, minimum, maximum, feeType, fee],
      );
    }
    const rows: Array<{ fee: string }> = await db.query(
      `SELECT round(client_service_fee($1, $2, a), 4)::text AS fee FROM unnest($3::numeric[]) WITH ORDINALITY AS l(a, n) ORDER BY n`,
      [tenant.clientId, serviceId, amounts],
    );
    return rows.map((r) => r.fee);
  }

  const fixed = (fee: string): Schedule => ({ hasTransactionFee: true, feeType: 'FIXED', fee });
  const percentage = (fee: string): Schedule => ({ hasTransactionFee: true, feeType: 'PERCENTAGE', fee });

  it('charges nothing when the service has no transaction fee, whatever else it says', async () => {
    expect(await fees({ hasTransactionFee: false, feeType: 'FIXED', fee: '10' }, ['100'])).toEqual(['0.0000']);
    expect(await fees({ hasTransactionFee: false, feeType: null, fee: '0', tiers: [['1', '1000', 'FIXED', '5']] }, ['100'])).toEqual([
      '0.0000',
    ]);
  });

  it('charges nothing when a fee is on but neither a type nor tiers are given', async () => {
    expect(await fees({ hasTransactionFee: true, feeType: null, fee: '10' }, ['100'])).toEqual(['0.0000']);
  });

  it('FIXED charges the fee whatever the amount', async () => {
    expect(await fees(fixed('10'), ['0.0001', '1', '999999.9999'])).toEqual(['10.0000', '10.0000', '10.0000']);
  });

  it.each([
    ['2.5', '100', '2.5000'],
    ['2.5', '10.0002', '0.2500'], // 0.250005: the fifth decimal is 0
    ['1.5', '3.3333', '0.0500'], // 0.0499995 rounds up
    ['1', '0.0250', '0.0003'], // 0.00025: half-up, where half-even would give 0.0002
    ['1', '0.0049', '0.0000'], // 0.000049 rounds down
    ['100', '123.4567', '123.4567'],
    ['0', '500', '0.0000'],
    ['1.0001', '123456789010054.9995', '1234691346889.5600'], // rounded once (dividing by 100 first would round to 8 decimals)
  ])('PERCENTAGE %s %% of %s is %s (half-up to 4 decimals)', async (percent, amount, expected) => {
    expect(await fees(percentage(percent), [amount])).toEqual([expected]);
  });

  it('PERCENTAGE equals amount × percent / 100 rounded half-up, computed in integers', async () => {
    // Amounts and percentages in units of 0.0001; the fee in units of 0.0001 is A·P / 10^6, rounded half-up.
    const units = (n: bigint) => `${n / 10_000n}.${(n % 10_000n).toString().padStart(4, '0')}`;
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 0n, max: 1_000_000n }),
        fc.array(fc.bigInt({ min: 1n, max: 10n ** 19n - 1n }), { minLength: 1, maxLength: 20 }),
        async (p, amounts) => {
          const expected = amounts.map((a) => units((2n * a * p + 1_000_000n) / 2_000_000n));
          expect(await fees(percentage(units(p)), amounts.map(units))).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  describe('tiers', () => {
    const tiered: Schedule = {
      hasTransactionFee: true,
      feeType: 'FIXED',
      fee: '99',
      tiers: [
        ['1', '1000', 'FIXED', '5'],
        ['1000.0001', '100000', 'PERCENTAGE', '1.25'],
        ['200000', '300000', 'FIXED', '50'],
      ],
    };

    it('the tier holding the amount decides, both of its bounds included', async () => {
      expect(await fees(tiered, ['1', '3.3333', '1000', '1000.0001', '54321.1234', '100000', '250000'])).toEqual([
        '5.0000',
        '5.0000',
        '5.0000',
        '12.5000', // 12.50000125
        '679.0140', // 679.0140425
        '1250.0000',
        '50.0000',
      ]);
    });

    it('an amount in no tier pays no fee, not the service-level fee (below, between and above the tiers)', async () => {
      expect(await fees(tiered, ['0.0001', '0.9999', '1000.00005', '100000.0001', '199999.9999', '300000.0001'])).toEqual(
        Array(6).fill('0.0000'),
      );
    });
  });
});
