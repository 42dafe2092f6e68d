/** ISO 4217 codes we accept (provider contract §3): a fixed list, anything else is a 400. */
export const CURRENCIES = [
  'AED',
  'AUD',
  'BIF',
  'BWP',
  'CAD',
  'CDF',
  'CHF',
  'CNY',
  'DKK',
  'EGP',
  'ETB',
  'EUR',
  'GBP',
  'GHS',
  'INR',
  'JPY',
  'KES',
  'MAD',
  'MWK',
  'MZN',
  'NGN',
  'NOK',
  'RWF',
  'SEK',
  'SOS',
  'SSP',
  'TZS',
  'UGX',
  'USD',
  'XAF',
  'XOF',
  'ZAR',
  'ZMW',
] as const;
export type Currency = (typeof CURRENCIES)[number];

export function isCurrency(value: unknown): value is Currency {
  return typeof value === 'string' && (CURRENCIES as readonly string[]).includes(value);
}

/**
 * Digits after the decimal point of each currency's minor unit (ISO 4217). The ledger keeps 4 decimals for every
 * currency; documents show amounts with these digits (rounded half-up for display only).
 */
export const MINOR_UNITS: Record<Currency, number> = {
  AED: 2,
  AUD: 2,
  BIF: 0,
  BWP: 2,
  CAD: 2,
  CDF: 2,
  CHF: 2,
  CNY: 2,
  DKK: 2,
  EGP: 2,
  ETB: 2,
  EUR: 2,
  GBP: 2,
  GHS: 2,
  INR: 2,
  JPY: 0,
  KES: 2,
  MAD: 2,
  MWK: 2,
  MZN: 2,
  NGN: 2,
  NOK: 2,
  RWF: 0,
  SEK: 2,
  SOS: 2,
  SSP: 2,
  TZS: 2,
  UGX: 0,
  USD: 2,
  XAF: 0,
  XOF: 0,
  ZAR: 2,
  ZMW: 2,
};

/** Minor-unit digits of a currency; 2 for a code outside the list (none is stored, but a document must not fail). */
export function minorUnits(currency: string): number {
  return isCurrency(currency) ? MINOR_UNITS[currency] : 2;
}
