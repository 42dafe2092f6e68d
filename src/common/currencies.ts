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
