import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { FX_RATE_SOURCE, type FxRateSource } from './fx-rate-source';
import { FxService } from './fx.service';

/** A claim not completed within this time (its worker died mid-refresh) may be taken over. */
const CLAIM_LEASE = '5 minutes';

/** GET /v1/fx's default base and the seed's currency: quoted even before any account holds it. */
const HOME_BASE = 'KES';

/**
 * The hourly rate refresh. Every worker asks regularly; the first to claim the clock hour in `fx_refreshes`
 * refreshes, so the rates are written once per hour however many workers run. A refresh that fails releases its
 * claim and keeps the rates it had (they go stale after FX_MAX_RATE_AGE_MS), counts the failure in the hour's row
 * (`paygate_fx_refresh_failures_total`), and the next ask retries it. The bases quoted are KES and every currency an
 * account of ours holds.
 */
@Injectable()
export class FxRefreshService {
  private readonly logger = new Logger(FxRefreshService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly fx: FxService,
    @Inject(FX_RATE_SOURCE) readonly source: FxRateSource | null,
  ) {}

  /** Refreshes the rates unless the hour of `now` was already refreshed (or is being refreshed); true when it did. */
  async refreshIfDue(now = new Date()): Promise<boolean> {
    if (!this.source) return false;
    const claimed: { hour: Date }[] = await this.db.query(
      `INSERT INTO fx_refreshes (hour, claimed_at) VALUES (date_trunc('hour', $1::timestamptz), now())
       ON CONFLICT (hour) DO UPDATE SET claimed_at = now()
         WHERE fx_refreshes.completed_at IS NULL AND (fx_refreshes.claimed_at IS NULL OR fx_refreshes.claimed_at < now() - interval '${CLAIM_LEASE}')
       RETURNING hour`,
      [now],
    );
    if (claimed.length === 0) return false;
    const { hour } = claimed[0];
    try {
      const held: { currency: string }[] = await this.db.query(`SELECT DISTINCT currency::text AS currency FROM ledger_accounts`);
      const bases = [...new Set([HOME_BASE, ...held.map((row) => row.currency)])].sort();
      const quotes = await this.source.fetchRates(bases);
      const replaced = await this.db.transaction(async (manager) => {
        const overrides: { pair: string }[] = await manager.query(
          `SELECT base_currency || '/' || currency AS pair FROM fx_rates WHERE source = 'admin' ORDER BY 1`,
        );
        for (const q of quotes) await this.fx.setRate(q.base, q.currency, q.buying, q.selling, this.source!.name, manager);
        await manager.query(`UPDATE fx_refreshes SET completed_at = now(), source = $2, rates = $3 WHERE hour = $1`, [
          hour,
          this.source!.name,
          quotes.length,
        ]);
        const refreshed = new Set(quotes.map((q) => `${q.base}/${q.currency}`));
        return overrides.map((o) => o.pair).filter((pair) => refreshed.has(pair));
      });
      if (replaced.length > 0) this.logger.warn(`FX refresh replaced rates set with fx:set: ${replaced.join(', ')}`);
      this.logger.log(`FX rates refreshed from ${this.source.name}: ${quotes.length} rates`);
      return true;
    } catch (error) {
      await this.db.query(`UPDATE fx_refreshes SET claimed_at = NULL, failures = failures + 1 WHERE hour = $1 AND completed_at IS NULL`, [
        hour,
      ]);
      throw error;
    }
  }
}
