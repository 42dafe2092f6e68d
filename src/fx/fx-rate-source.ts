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

/** Where the hourly refresh gets its rates: Open Exchange Rates in production, fixed quotes in the sandbox. */
export interface FxRateSource {
  /** Names the source in `fx_rates.source`. */
  readonly name: string;
  /** Quotes for each of `bases` the source can price (a source with fixed quotes may answer its own bases only). */
  fetchRates(bases: readonly string[]): Promise<SourceRate[]>;
}

export const FX_RATE_SOURCE = Symbol('FX_RATE_SOURCE');

/** The sandbox source: the fixed quotes of the seed (base KES only), so every refresh gives the same rates. */
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
