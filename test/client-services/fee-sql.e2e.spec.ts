import { NestFastifyApplication } from '@nestjs/platform-fastify';
import fc from 'fast-check';
import { ClientServicesService } from '../../src/client-services/client-services.service';
import { feeFor } from '../../src/client-services/fees';
import { Money } from '../../src/common/money';
import { createService } from '../support/money-fixtures';
import { createTenant, createTestApp, dataSource, TestTenant } from '../support/test-app';

/** An amount with up to 4 decimals and 15 integer digits, as the API accepts them. */
const amount = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 15 }))
  .map(([whole, fraction, digits]) => new Money(`${whole % 10n ** BigInt(digits)}.${String(fraction).padStart(4, '0')}`))
  .filter((a) => a.gt(0));
const rate = fc.integer({ min: 0, max: 1_000_000 }).map((n) => new Money(n).dividedBy(10_000)); // 0 … 100, 4 decimals
const fixedFee = fc.integer({ min: 0, max: 100_000_000 }).map((n) => new Money(n).dividedBy(10_000));
const feeOfType = fc.oneof(
  fc.record({ fee_type: fc.constant('FIXED'), fee: fixedFee }),
  fc.record({ fee_type: fc.constant('PERCENTAGE'), fee: rate }),
);
/** Tiers over consecutive ranges, gaps allowed. */
const tiers = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 5000 }), feeOfType), { minLength: 1, maxLength: 3 })
  .map((parts) => {
    let start = new Money(0);
    return parts.map(([gap, width, f]) => {
      const minimum = start.plus(gap);
      const maximum = minimum.plus(width);
      start = maximum.plus('0.0001');
      return { minimum_amount: minimum.toFixed(4), maximum_amount: maximum.toFixed(4), fee_type: f.fee_type, fee: f.fee.toFixed(4) };
    });
  });
const schedule = fc.oneof(
  fc.constant({ has_transaction_fee: false }),
  feeOfType.map((f) => ({ has_transaction_fee: true, transaction_fee_type: f.fee_type, transaction_fee: f.fee.toFixed(4) })),
  tiers.map((t) => ({ has_transaction_fee: true, transaction_fee_tiers: t })),
);

/**
 * client_service_fee (SQL, for the acceptance calls that price inside Postgres) charges what feeFor
 * (src/client-services/fees.ts) charges, to the fourth decimal, for any schedule and amount.
 */
describe('client_service_fee', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;

  beforeAll(async () => {
    app = await createTestApp();
    tenant = await createTenant(app);
  });
  afterAll(async () => app?.close());

  it('rounds a large percentage fee once, as feeFor does (dividing by 100 first rounded it to 8 decimals)', async () => {
    const code = await createService(app, tenant, {
      has_transaction_fee: true,
      transaction_fee_type: 'PERCENTAGE',
      transaction_fee: '1.0001',
    });
    const terms = (await app.get(ClientServicesService).findTerms(dataSource(app).manager, tenant.clientId, code))!;
    const [{ fee }] = await dataSource(app).query(`SELECT client_service_fee($1, $2)::text AS fee`, [terms.id, '123456789010054.9995']);
    expect(fee).toBe('1234691346889.5600');
    expect(feeFor(terms.fees, new Money('123456789010054.9995')).toFixed(4)).toBe(fee);
  });

  it('agrees with feeFor', async () => {
    await fc.assert(
      fc.asyncProperty(schedule, fc.array(amount, { minLength: 1, maxLength: 20 }), async (fees, amounts) => {
        const code = await createService(app, tenant, fees);
        const terms = (await app.get(ClientServicesService).findTerms(dataSource(app).manager, tenant.clientId, code))!;
        const inSql: Array<{ fee: string }> = await dataSource(app).query(
          `SELECT client_service_fee($1, a) AS fee FROM unnest($2::numeric[]) WITH ORDINALITY AS l(a, n) ORDER BY n`,
          [terms.id, amounts.map((a) => a.toFixed())],
        );
        expect(inSql.map((r) => new Money(r.fee).toFixed(4))).toEqual(amounts.map((a) => feeFor(terms.fees, a).toFixed(4)));
      }),
      { numRuns: 60 },
    );
  });
});
