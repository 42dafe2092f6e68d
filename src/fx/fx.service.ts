import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource, EntityManager } from 'typeorm';
import { Money } from '../common/money';

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

/**
 * FX rates per base currency (provider contract §10): rates[C] = {buying, selling} is the price of one unit of
 * C in the base currency, as banks quote.
 */
@Injectable()
export class FxService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async setRate(base: string, currency: string, buying: Decimal, selling: Decimal, source: string, manager: EntityManager = this.db.manager): Promise<void> {
    if (base === currency) throw new BadRequestException('A currency has no rate against itself');
    if (buying.gt(selling)) throw new BadRequestException('The buying rate must not be above the selling rate');
    await manager.query(
      `INSERT INTO fx_rates (base_currency, currency, buying, selling, source, updated_at) VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (base_currency, currency) DO UPDATE SET buying = $3, selling = $4, source = $5, updated_at = now()`,
      [base, currency, buying.toFixed(), selling.toFixed(), source],
    );
  }

  async ratesFor(base: string): Promise<FxRate[]> {
    const rows = await this.db.query(
      `SELECT base_currency, currency, buying, selling, updated_at FROM fx_rates WHERE base_currency = $1 ORDER BY currency`,
      [base],
    );
    return rows.map((r: { base_currency: string; currency: string; buying: string; selling: string; updated_at: Date }) => ({
      baseCurrency: r.base_currency,
      currency: r.currency,
      buying: new Money(r.buying),
      selling: new Money(r.selling),
      updatedAt: r.updated_at,
    }));
  }

  /**
   * The multiplier that turns an amount in `from` into the wallet's currency `to`: wallet amount = amount × rate.
   * We buy the incoming currency at our buying price and sell at our selling price, so the provider never loses
   * on the spread. Uses the quote of base `to` directly, or the inverse of base `from`'s quote.
   */
  async conversionRate(manager: EntityManager, from: string, to: string, direction: ConversionDirection): Promise<Decimal> {
    const [direct] = await manager.query(
      `SELECT buying, selling FROM fx_rates WHERE base_currency = $1 AND currency = $2`,
      [to, from],
    );
    if (direct) {
      const price = new Money(direction === 'INTO_WALLET' ? direct.buying : direct.selling);
      return price.toDecimalPlaces(RATE_SCALE);
    }
    const [inverse] = await manager.query(
      `SELECT buying, selling FROM fx_rates WHERE base_currency = $1 AND currency = $2`,
      [from, to],
    );
    if (inverse) {
      const price = new Money(direction === 'INTO_WALLET' ? inverse.selling : inverse.buying);
      return new Money(1).dividedBy(price).toDecimalPlaces(RATE_SCALE);
    }
    throw new BadRequestException(`No exchange rate from ${from} to ${to}`);
  }
}
