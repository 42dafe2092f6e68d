import { NestFastifyApplication } from '@nestjs/platform-fastify';
import fc from 'fast-check';
import { EntityManager } from 'typeorm';
import { formatAmount, Money } from '../../src/common/money';
import { RATE_SCALE } from '../../src/fx/fx.service';
import { createTestApp, dataSource } from '../support/test-app';

type Direction = 'INTO_WALLET' | 'OUT_OF_WALLET';
/** A rate (8 decimals, as stored and answered), or no rate: none for the pair (newest null) or only stale ones. */
type Conversion = { rate: string } | { newest: string | null };

interface QuoteRow {
  base_currency: string;
  buying: string;
  selling: string;
  updated_at: Date;
  fresh: boolean;
}

/**
 * FxService.conversionRate as it was before conversions moved into wallet_money_batch (its query and its decimal.js
 * arithmetic, unchanged): the rule that fx_conversion_rate must keep.
 */
async function conversionAsFxServiceGaveIt(
  manager: EntityManager,
  from: string,
  to: string,
  direction: Direction,
  maxAgeMs: number,
): Promise<Conversion> {
  const rows: QuoteRow[] = await manager.query(
    `SELECT base_currency, currency, buying, selling, updated_at, updated_at >= now() - $3 * interval '1 millisecond' AS fresh
     FROM fx_rates WHERE (base_currency, currency) IN (($1, $2), ($2, $1))`,
    [to, from, maxAgeMs],
  );
  const direct = rows.find((r) => r.base_currency === to && r.fresh);
  if (direct)
    return { rate: new Money(direction === 'INTO_WALLET' ? direct.buying : direct.selling).toDecimalPlaces(RATE_SCALE).toFixed(8) };
  const inverse = rows.find((r) => r.base_currency === from && r.fresh);
  if (inverse) {
    const price = new Money(direction === 'INTO_WALLET' ? inverse.selling : inverse.buying);
    return { rate: new Money(1).dividedBy(price).toDecimalPlaces(RATE_SCALE).toFixed(8) };
  }
  if (rows.length === 0) return { newest: null };
  const newest = rows.map((r) => new Date(r.updated_at)).sort((a, b) => b.getTime() - a.getTime())[0];
  return { newest: newest.toISOString() };
}

async function conversionInSql(
  manager: EntityManager,
  from: string,
  to: string,
  direction: Direction,
  maxAgeMs: number,
): Promise<Conversion> {
  const [row] = await manager.query(
    'SELECT rate::text, newest_rate_at FROM fx_conversion_rate(p_from => $1, p_to => $2, p_direction => $3, p_max_age_ms => $4)',
    [from, to, direction, maxAgeMs],
  );
  return row.rate !== null ? { rate: row.rate } : { newest: row.newest_rate_at === null ? null : row.newest_rate_at.toISOString() };
}

/** A numeric(24,8) price: up to 16 integer digits, 8 decimals, positive. */
const price = fc
  .oneof(
    fc.bigInt({ min: 1n, max: 10n ** 24n - 1n }),
    fc.bigInt({ min: 1n, max: 10n ** 11n }),
    fc.constantFrom(1n, 3n, 7n, 30_000_000n, 100_000_000n, 300_000_000n, 700_000_000n, 12_850_000_000n, 13_050_000_000n, 99_999_999n),
  )
  .map((units) => {
    const digits = units.toString().padStart(9, '0');
    return `${digits.slice(0, -8)}.${digits.slice(-8)}`;
  });
/** Amounts with up to 4 decimals, including those whose converted value lands on a half. */
const amount = fc.oneof(
  fc.bigInt({ min: 1n, max: 10n ** 19n - 1n }).map((units) => new Money(units.toString()).dividedBy(10_000).toFixed()),
  fc.constantFrom('0.0001', '0.5', '1', '5', '12.3456', '999999999999999.9999'),
);

/**
 * fx_conversion_rate (the conversion rule in SQL, used by wallet_money_batch) gives the rate FxService.conversionRate
 * gave, to the 8th decimal, or refuses where it refused (no quote; only stale quotes, naming the newest), whichever
 * quote is direct or inverse, fresh or stale, and whatever the direction; and the converted amount, rounded half up
 * to 4 decimals in SQL, is decimal.js's amount × rate rounded half up to 4 decimals (formatAmount).
 */
describe('fx_conversion_rate', () => {
  let app: NestFastifyApplication;
  // A pair no other test quotes; every run is rolled back, so nothing is left for other files to see.
  const [A, B] = ['CDF', 'ETB'];

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => app?.close());

  it('gives the rate or the refusal FxService.conversionRate gave, for any quotes, ages and directions', async () => {
    const quote = (maxAgeMs: number) =>
      fc.record({
        buying: price,
        selling: price,
        // Fresh, on the limit (still fresh), just past it, or anywhere up to three times it.
        ageMs: fc.oneof(fc.constant(0), fc.constant(maxAgeMs), fc.constant(maxAgeMs + 1), fc.integer({ min: 0, max: 3 * maxAgeMs })),
      });
    const scenario = fc.constantFrom(7_200_000, 3_600_000, 90_000, 1).chain((maxAgeMs) =>
      fc.record({
        maxAgeMs: fc.constant(maxAgeMs),
        quotes: fc.record({ [A]: fc.option(quote(maxAgeMs)), [B]: fc.option(quote(maxAgeMs)) }),
        amount,
      }),
    );
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ maxAgeMs, quotes, amount }) => {
        await rolledBack(async (manager) => {
          await manager.query(`DELETE FROM fx_rates WHERE (base_currency, currency) IN (($1, $2), ($2, $1))`, [A, B]);
          for (const [base, q] of Object.entries(quotes)) {
            if (!q) continue;
            await manager.query(
              `INSERT INTO fx_rates (base_currency, currency, buying, selling, source, updated_at)
               VALUES ($1, $2, $3, $4, 'test', now() - $5 * interval '1 millisecond')`,
              [base, base === A ? B : A, q.buying, q.selling, q.ageMs],
            );
          }
          for (const [from, to] of [
            [A, B],
            [B, A],
          ]) {
            for (const direction of ['INTO_WALLET', 'OUT_OF_WALLET'] as const) {
              const expected = await conversionAsFxServiceGaveIt(manager, from, to, direction, maxAgeMs);
              expect({ from, direction, ...(await conversionInSql(manager, from, to, direction, maxAgeMs)) }).toEqual({
                from,
                direction,
                ...expected,
              });
              // Past 28 integer digits decimal.js's 40 significant digits round before the 4th decimal; no service's
              // bounds (numeric(20,4)) let such an amount through, on either path.
              if ('rate' in expected && new Money(amount).times(expected.rate).lt('1e20')) {
                // The expression wallet_money_batch converts with.
                const [{ converted }] = await manager.query('SELECT round($1::numeric * $2::numeric, 4)::text AS converted', [
                  amount,
                  expected.rate,
                ]);
                expect({ amount, rate: expected.rate, converted }).toEqual({
                  amount,
                  rate: expected.rate,
                  converted: formatAmount(new Money(amount).times(expected.rate)),
                });
              }
              compared++;
            }
          }
        });
      }),
      { numRuns: 250 },
    );
    expect(compared).toBe(250 * 4);
  });

  it('rounds an inverse quote half up at the 8th decimal from its exact quotient', async () => {
    // 1 / 0.00000003 = 33333333.333333333…, 1 / 7 = 0.142857142857…, 1 / 0.16 = 6.25 exactly, 1 / 1.99999999 = 0.500000002500000012…
    const cases: Array<[string, string]> = [
      ['0.00000003', '33333333.33333333'],
      ['7.00000000', '0.14285714'],
      ['0.16000000', '6.25000000'],
      ['1.99999999', '0.50000000'],
      ['0.00000001', '100000000.00000000'],
      ['3.00000000', '0.33333333'],
      ['1.50000000', '0.66666667'],
      ['9999999999999999.99999999', '0.00000000'],
    ];
    for (const [selling, rate] of cases) {
      await rolledBack(async (manager) => {
        await manager.query(`DELETE FROM fx_rates WHERE (base_currency, currency) IN (($1, $2), ($2, $1))`, [A, B]);
        await manager.query(`INSERT INTO fx_rates (base_currency, currency, buying, selling, source) VALUES ($1, $2, $3, $3, 'test')`, [
          A,
          B,
          selling,
        ]);
        expect({ selling, ...(await conversionInSql(manager, A, B, 'INTO_WALLET', 7_200_000)) }).toEqual({ selling, rate });
      });
    }
  });

  /** Runs `work` in a transaction that is rolled back: one now() for the quotes' ages and both computations. */
  async function rolledBack(work: (manager: EntityManager) => Promise<void>): Promise<void> {
    const rollback = new Error('rollback');
    await dataSource(app)
      .transaction(async (manager) => {
        await work(manager);
        throw rollback;
      })
      .catch((error) => {
        if (error !== rollback) throw error;
      });
  }
});
