/**
 * The sandbox rate source: fixed quotes for base KES (KES per unit), so tests and demos see the same
 * conversions every run. Production replaces this with a market feed behind the same shape.
 */
export const SANDBOX_KES_RATES: Record<string, { buying: string; selling: string }> = {
  USD: { buying: '128.5000', selling: '130.5000' },
  EUR: { buying: '139.0000', selling: '141.5000' },
  GBP: { buying: '162.0000', selling: '165.0000' },
  UGX: { buying: '0.0345', selling: '0.0355' },
  TZS: { buying: '0.0495', selling: '0.0510' },
};
