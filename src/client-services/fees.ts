import Decimal from 'decimal.js';
import { Money, roundMoney } from '../common/money';

export type FeeType = 'FIXED' | 'PERCENTAGE';

export interface FeeTier {
  minimumAmount: Decimal;
  maximumAmount: Decimal;
  feeType: FeeType;
  fee: Decimal;
}

export interface FeeSchedule {
  hasTransactionFee: boolean;
  feeType: FeeType | null;
  fee: Decimal;
  tiers: FeeTier[];
}

/**
 * The fee a client service charges on an amount (provider contract §4, §10): the tier holding the amount when
 * tiers exist, otherwise the service's FIXED amount or PERCENTAGE (2.5 means 2.5 %), rounded half-up to 4 dp.
 */
export function feeFor(schedule: FeeSchedule, amount: Decimal): Decimal {
  if (!schedule.hasTransactionFee) return new Money(0);
  if (schedule.tiers.length > 0) {
    const tier = schedule.tiers.find((t) => amount.gte(t.minimumAmount) && amount.lte(t.maximumAmount));
    return tier ? apply(tier.feeType, tier.fee, amount) : new Money(0);
  }
  return schedule.feeType ? apply(schedule.feeType, schedule.fee, amount) : new Money(0);
}

function apply(type: FeeType, fee: Decimal, amount: Decimal): Decimal {
  return type === 'FIXED' ? roundMoney(fee) : roundMoney(amount.times(fee).dividedBy(100));
}
