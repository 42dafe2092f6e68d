import Decimal from 'decimal.js';
import { Money } from '../common/money';
import { SANDBOX_KES_RATES } from './sandbox-rates';

/** One quote from a rate source: the price of one unit of `currency` in `base`, as banks quote. */
export interface SourceRate {
  base: string;
  currency: string;
  buying: Decimal;
  selling: Decimal;
}

/** Where the hourly refresh gets its rates; a market feed's adapter implements it in production. */
export interface FxRateSource {
  /** Names the source in `fx_rates.source`. */
  readonly name: string;
  fetchRates(): Promise<SourceRate[]>;
}

export const FX_RATE_SOURCE = Symbol('FX_RATE_SOURCE');

/** The sandbox source: the fixed quotes of the seed, so every refresh gives the same rates. */
export class SandboxFxRateSource implements FxRateSource {
  readonly name = 'sandbox';

  async fetchRates(): Promise<SourceRate[]> {
    return Object.entries(SANDBOX_KES_RATES).map(([currency, rate]) => ({
      base: 'KES',
      currency,
      buying: new Money(rate.buying),
      selling: new Money(rate.selling),
    }));
  }
}
