import Decimal from 'decimal.js';

/** M-Pesa moves whole shillings (provider contract §11): the refusal for any other amount, or null. */
export function wholeShillingsProblem(amount: string, currency: string, what: string): string | null {
  if (currency === 'KES' && new Decimal(amount).isInteger()) return null;
  if (currency !== 'KES') return `M-Pesa moves Kenya shillings only; ${what} is in ${currency}`;
  return `M-Pesa moves whole shillings only; ${what} ${new Decimal(amount).toFixed()} has a fractional part`;
}
