import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource, EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';

export const RATE_SCALE = 8;

/** Which side of the quote applies: money arriving in a wallet, or leaving it. */
export type ConversionDirection = 'INTO_WALLET' | 'OUT_OF_WALLET';

export interface FxRate {
  baseCurrency: string;
  currency: string;
  buying: Decimal;
  selling: Decimal;
  updatedAt: Date;
}

interface RateRow {
  base_currency: string;
  currency: string;
  buying: string;
  selling: string;
  updated_at: Date;
  fresh: boolean;
}

/**
 * FX rates per base currency (provider contract §10): rates[C] = {buying, selling} is the price of one unit of
 * C in the base currency, as banks quote. A rate older than FX_MAX_RATE_AGE_MS (by its stored updated_at, on the
 * database clock) is neither shown nor used.
 */
@Injectable()
export class FxService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async setRate(
    base: string,
    currency: string,
    buying: Decimal,
    selling: Decimal,
    source: string,
    manager: EntityManager = this.db.manager,
  ): Promise<void> {
    if (base === currency) throw new BadRequestException('A currency has no rate against itself');
    if (buying.gt(selling)) throw new BadRequestException('The buying rate must not be above the selling rate');
    await manager.query(
      `INSERT INTO fx_rates (base_currency, currency, buying, selling, source, updated_at) VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (base_currency, currency) DO UPDATE SET buying = $3, selling = $4, source = $5, updated_at = now()`,
      [base, currency, buying.toFixed(), selling.toFixed(), source],
    );
  }

  /**
   * The fresh rates of a base currency (GET /v1/fx). A base with no quotes of its own is derived from the base
   * that quotes it (the one with the most quotes), keeping the spread on our side: we buy C for B at
   * buying(C) / selling(B) and sell it at selling(C) / buying(B). Null when neither is possible.
   */
  async ratesFor(base: string): Promise<FxRate[] | null> {
    const rows = await this.db.query(
      `SELECT base_currency, currency, buying, selling, updated_at FROM fx_rates
       WHERE updated_at >= now() - $1 * interval '1 millisecond' ORDER BY base_currency, currency`,
      [this.config.fxMaxRateAgeMs],
    );
    const fresh: FxRate[] = rows.map((r: RateRow) => ({
      baseCurrency: r.base_currency,
      currency: r.currency,
      buying: new Money(r.buying),
      selling: new Money(r.selling),
      updatedAt: r.updated_at,
    }));
    const direct = fresh.filter((r) => r.baseCurrency === base);
    if (direct.length > 0) return direct;

    const pivots = fresh
      .filter((r) => r.currency === base)
      .map((r) => ({ quote: r, rates: fresh.filter((p) => p.baseCurrency === r.baseCurrency) }));
    pivots.sort((a, b) => b.rates.length - a.rates.length || a.quote.baseCurrency.localeCompare(b.quote.baseCurrency));
    if (pivots.length === 0) return null;
    const { quote, rates } = pivots[0];
    const pivotCurrency: FxRate = { ...quote, currency: quote.baseCurrency, buying: new Money(1), selling: new Money(1) };
    return [pivotCurrency, ...rates.filter((r) => r.currency !== base)]
      .map((r) => ({
        baseCurrency: base,
        currency: r.currency,
        buying: r.buying.dividedBy(quote.selling).toDecimalPlaces(RATE_SCALE, Decimal.ROUND_DOWN),
        selling: r.selling.dividedBy(quote.buying).toDecimalPlaces(RATE_SCALE, Decimal.ROUND_UP),
        updatedAt: r.updatedAt < quote.updatedAt ? r.updatedAt : quote.updatedAt,
      }))
      .sort((a, b) => a.currency.localeCompare(b.currency));
  }

  /**
   * The multiplier that turns an amount in `from` into the wallet's currency `to`: wallet amount = amount × rate.
   * We buy the incoming currency at our buying price and sell at our selling price, so the provider never loses
   * on the spread. Uses the quote of base `to` directly, or the inverse of base `from`'s quote; a rate older
   * than the maximum age is refused with a 400 naming the pair.
   */
  async conversionRate(manager: EntityManager, from: string, to: string, direction: ConversionDirection): Promise<Decimal> {
    const rows: RateRow[] = await manager.query(
      `SELECT base_currency, currency, buying, selling, updated_at, updated_at >= now() - $3 * interval '1 millisecond' AS fresh
       FROM fx_rates WHERE (base_currency, currency) IN (($1, $2), ($2, $1))`,
      [to, from, this.config.fxMaxRateAgeMs],
    );
    const direct = rows.find((r) => r.base_currency === to && r.fresh);
    if (direct) return new Money(direction === 'INTO_WALLET' ? direct.buying : direct.selling).toDecimalPlaces(RATE_SCALE);
    const inverse = rows.find((r) => r.base_currency === from && r.fresh);
    if (inverse) {
      const price = new Money(direction === 'INTO_WALLET' ? inverse.selling : inverse.buying);
      return new Money(1).dividedBy(price).toDecimalPlaces(RATE_SCALE);
    }
    if (rows.length === 0) throw new BadRequestException(`No exchange rate from ${from} to ${to}`);
    const newest = rows.map((r) => new Date(r.updated_at)).sort((a, b) => b.getTime() - a.getTime())[0];
    throw new BadRequestException(
      `The ${from}/${to} exchange rate is stale: last updated ${newest.toISOString()}, and conversions use rates at most ` +
        `${describeAge(this.config.fxMaxRateAgeMs)} old`,
    );
  }
}

/** A rate is shown with at least four decimals and at most RATE_SCALE: "128.5000", "0.00766284". */
export function formatRate(rate: Decimal): string {
  const text = rate.toDecimalPlaces(RATE_SCALE).toFixed();
  const decimals = text.includes('.') ? text.split('.')[1].length : 0;
  return decimals >= 4 ? text : rate.toFixed(4);
}

function describeAge(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
