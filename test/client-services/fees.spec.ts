import fc from 'fast-check';
import { Money } from '../../src/common/money';
import { FeeSchedule, FeeTier, feeFor } from '../../src/client-services/fees';

/** Fees of a client service (provider contract §4, §10); pure, no database. */
const m = (value: string | number) => new Money(value);
const fee = (schedule: Partial<FeeSchedule>, amount: string) =>
  feeFor({ hasTransactionFee: true, feeType: null, fee: m(0), tiers: [], ...schedule }, m(amount)).toFixed(4);
const tier = (min: string, max: string, feeType: FeeTier['feeType'], value: string): FeeTier => ({
  minimumAmount: m(min),
  maximumAmount: m(max),
  feeType,
  fee: m(value),
});

describe('feeFor', () => {
  it('charges nothing when the service has no transaction fee, whatever else it says', () => {
    expect(fee({ hasTransactionFee: false, feeType: 'FIXED', fee: m(10) }, '100')).toBe('0.0000');
    expect(fee({ hasTransactionFee: false, tiers: [tier('1', '1000', 'FIXED', '5')] }, '100')).toBe('0.0000');
  });

  it('charges nothing when a fee is on but neither a type nor tiers are given', () => {
    expect(fee({ feeType: null, fee: m(10) }, '100')).toBe('0.0000');
  });

  it('FIXED charges the fee whatever the amount', () => {
    for (const amount of ['0.0001', '1', '999999.9999']) expect(fee({ feeType: 'FIXED', fee: m(10) }, amount)).toBe('10.0000');
  });

  it.each([
    ['2.5', '100', '2.5000'],
    ['2.5', '10.0002', '0.2500'], // 0.250005: the fifth decimal is 0
    ['1.5', '3.3333', '0.0500'], // 0.0499995 rounds up
    ['1', '0.0250', '0.0003'], // 0.00025: half-up, where half-even would give 0.0002
    ['1', '0.0049', '0.0000'], // 0.000049 rounds down
    ['100', '123.4567', '123.4567'],
    ['0', '500', '0.0000'],
  ])('PERCENTAGE %s %% of %s is %s (half-up to 4 decimals)', (percent, amount, expected) => {
    expect(fee({ feeType: 'PERCENTAGE', fee: m(percent) }, amount)).toBe(expected);
  });

  it('PERCENTAGE equals amount × percent / 100 rounded half-up, computed in integers', () => {
    // Amounts and percentages in units of 0.0001; the fee in units of 0.0001 is A·P / 10^6, rounded half-up.
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 19n - 1n }), fc.bigInt({ min: 0n, max: 1_000_000n }), (a, p) => {
        const units = (2n * a * p + 1_000_000n) / 2_000_000n;
        const expected = `${units / 10_000n}.${(units % 10_000n).toString().padStart(4, '0')}`;
        expect(fee({ feeType: 'PERCENTAGE', fee: m(p.toString()).div(10_000) }, m(a.toString()).div(10_000).toFixed(4))).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  describe('tiers', () => {
    const tiers = [
      tier('1', '1000', 'FIXED', '5'),
      tier('1000.0001', '100000', 'PERCENTAGE', '1.25'),
      tier('200000', '300000', 'FIXED', '50'),
    ];
    const tiered = { tiers, feeType: 'FIXED' as const, fee: m(99) };

    it('the tier holding the amount decides, both of its bounds included', () => {
      expect(fee(tiered, '1')).toBe('5.0000');
      expect(fee(tiered, '1000')).toBe('5.0000');
      expect(fee(tiered, '1000.0001')).toBe('12.5000'); // 12.50000125
      expect(fee(tiered, '100000')).toBe('1250.0000');
      expect(fee(tiered, '250000')).toBe('50.0000');
    });

    it('an amount in no tier pays no fee, not the service-level fee (below, between and above the tiers)', () => {
      for (const amount of ['0.9999', '100000.0001', '199999.9999', '300000.0001']) expect(fee(tiered, amount)).toBe('0.0000');
    });
  });
});
