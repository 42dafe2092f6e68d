import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource, EntityManager } from 'typeorm';
import { Money } from '../common/money';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';

export const RATE_SCALE = 8;

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
}

/**
 * FX rates per base currency (provider contract §10): rates[C] = {buying, selling} is the price of one unit of
 * C in the base currency, as banks quote. A rate older than FX_MAX_RATE_AGE_MS (by its stored updated_at, on the
 * database clock: SQL function fx_rate_is_fresh, src/fx/sql/fx_rate_is_fresh.sql) is neither shown nor used. Wallet
 * money takes its conversion rate in the database, with the rest of the request (SQL function fx_conversion_rate,
 * src/fx/sql/fx_conversion_rate.sql, called only by wallet_money_batch).
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
       ON CONFLICT (base_currency, currency) DO UPDATE SET buying = $3, selling = $4, source = $5, updated_at = EXCLUDED.updated_at`,
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
       WHERE fx_rate_is_fresh(p_updated_at => updated_at, p_max_age_ms => $1) ORDER BY base_currency, currency`,
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
}

/** A rate is shown with at least four decimals and at most RATE_SCALE: "128.5000", "0.00766284". */
export function formatRate(rate: Decimal): string {
  const text = rate.toDecimalPlaces(RATE_SCALE).toFixed();
  const decimals = text.includes('.') ? text.split('.')[1].length : 0;
  return decimals >= 4 ? text : rate.toFixed(4);
}

/**
 * The 400 for a conversion from `from` into a wallet's currency `to` without a usable rate: the pair has no quote
 * at all, or only quotes older than the maximum age (`stale`: the newest one's time, and that age).
 */
export function missingRateError(from: string, to: string, stale: { newestRateAt: Date; maxAgeMs: number } | null): BadRequestException {
  if (!stale) return new BadRequestException(`No exchange rate from ${from} to ${to}`);
  return new BadRequestException(
    `The ${from}/${to} exchange rate is stale: last updated ${stale.newestRateAt.toISOString()}, and conversions use rates at ` +
      `most ${describeAge(stale.maxAgeMs)} old`,
  );
}

function describeAge(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
