import Decimal from 'decimal.js';
import { minorUnits } from './currencies';

/** All money arithmetic goes through decimal.js with enough precision for numeric(20,4) and FX products. */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Money = Decimal;

export const MONEY_SCALE = 4;
export const MAX_INTEGER_DIGITS = 15;

/** Stored amounts are shown with exactly four decimals: "100.0000". */
export function formatAmount(value: Decimal.Value): string {
  return new Money(value).toFixed(MONEY_SCALE);
}

/**
 * Why a request amount is unacceptable, or null when it is a positive amount with at most four decimals and
 * fifteen integer digits. Accepts a JSON number or a numeric string (provider contract §3).
 */
export function amountProblem(value: unknown): string | null {
  if (typeof value !== 'number' && typeof value !== 'string') return 'must be a number';
  if (typeof value === 'number' && !Number.isFinite(value)) return 'must be a finite number';
  // No trimming: the caller builds a Money from the value as sent, and decimal.js refuses padded strings.
  const text = typeof value === 'number' ? numberToPlainString(value) : value;
  if (!/^-?\d+(\.\d+)?$/.test(text)) return 'must be a number';
  const amount = new Money(text);
  if (amount.lte(0)) return 'must be greater than zero';
  if (amount.decimalPlaces() > MONEY_SCALE) return `must have at most ${MONEY_SCALE} decimal places`;
  if (amount.trunc().toFixed(0).length > MAX_INTEGER_DIGITS) return `must have at most ${MAX_INTEGER_DIGITS} integer digits`;
  return null;
}

/** As amountProblem, but zero (0, "0", "0.00") is acceptable: floors, fees and minimums may be zero. */
export function nonNegativeAmountProblem(value: unknown): string | null {
  const problem = amountProblem(value);
  if (problem !== 'must be greater than zero') return problem;
  return new Money(typeof value === 'number' ? numberToPlainString(value) : (value as string)).isZero() ? null : 'must not be negative';
}

/** JSON numbers such as 1e21 or 1e-7 print in exponent form; decimal.js reads them exactly either way. */
function numberToPlainString(value: number): string {
  return new Money(value).toFixed();
}

/** An amount as printed: rounded half-up to the currency's minor units, with thousands separators ("1,234.50"). */
export function displayAmount(value: Decimal.Value, currency: string): string {
  const digits = minorUnits(currency);
  const fixed = new Money(value).toDecimalPlaces(digits, Decimal.ROUND_HALF_UP).toFixed(digits);
  // Statements print hundreds of thousands of amounts: grouped by slicing, not by a look-ahead regex.
  const sign = fixed[0] === '-' ? 1 : 0;
  const point = fixed.indexOf('.');
  const end = point === -1 ? fixed.length : point;
  let grouped = fixed.slice(0, sign + ((end - sign) % 3 || 3));
  for (let i = grouped.length; i < end; i += 3) grouped += `,${fixed.slice(i, i + 3)}`;
  return grouped + fixed.slice(end);
}
