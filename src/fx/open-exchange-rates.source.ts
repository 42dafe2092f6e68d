import Decimal from 'decimal.js';
import { parse } from 'lossless-json';
import { CURRENCIES } from '../common/currencies';
import { Money } from '../common/money';
import type { OpenExchangeRatesConfig } from '../rails/rails-config';
import type { FxRateSource, SourceRate } from './fx-rate-source';
import { RATE_SCALE } from './fx.service';

/** How long the call may take before the refresh counts as failed (the next ask retries within a minute). */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Open Exchange Rates (`GET {base}/latest.json`): mid rates against USD, from which every base asked for is derived
 * as cross rates (base per USD ÷ C per USD), buying and selling our spread either side of the mid, rounded away
 * from us. Only the currencies we accept are quoted. The answer's numbers never pass through a JS float.
 */
export class OpenExchangeRatesSource implements FxRateSource {
  readonly name = 'openexchangerates';

  constructor(
    private readonly config: OpenExchangeRatesConfig,
    /** A feed whose rates are older than this counts as failed, so the stored ones go stale rather than look fresh. */
    private readonly maxAgeMs: number,
    private readonly timeoutMs = REQUEST_TIMEOUT_MS,
  ) {}

  async fetchRates(bases: readonly string[]): Promise<SourceRate[]> {
    const usdRates = await this.latest();
    const spread = new Money(this.config.spreadBps).dividedBy(10_000);
    const quoted = CURRENCIES.filter((currency) => usdRates.has(currency));
    const rates: SourceRate[] = [];
    for (const base of bases.filter((b) => usdRates.has(b))) {
      for (const currency of quoted) {
        if (currency === base) continue;
        const mid = usdRates.get(base)!.dividedBy(usdRates.get(currency)!);
        const buying = mid.times(new Money(1).minus(spread)).toDecimalPlaces(RATE_SCALE, Decimal.ROUND_DOWN);
        const selling = mid.times(new Money(1).plus(spread)).toDecimalPlaces(RATE_SCALE, Decimal.ROUND_UP);
        // A price below the stored scale would read as zero: such a pair is better not quoted.
        if (buying.isPositive()) rates.push({ base, currency, buying, selling });
      }
    }
    return rates;
  }

  /** Units of each currency per USD, from the latest answer; throws on anything but a fresh, well-formed one. */
  private async latest(): Promise<Map<string, Decimal>> {
    const url = `${this.config.baseUrl}/latest.json?app_id=${encodeURIComponent(this.config.appId)}`;
    // The time-out covers reading the body too.
    const { status, text } = await fetch(url, { signal: AbortSignal.timeout(this.timeoutMs) })
      .then(async (response) => ({ status: response.status, text: await response.text() }))
      .catch((error: Error) => {
        // The URL carries the app id: the message names only the host.
        throw new Error(`Open Exchange Rates at ${new URL(url).host} did not answer: ${error.name}`);
      });
    if (status !== 200) throw new Error(`Open Exchange Rates answered HTTP ${status}${errorMessage(text)}`);
    let body: unknown;
    try {
      body = parse(text, undefined, (number) => number);
    } catch {
      throw new Error('Open Exchange Rates answered something that is not JSON');
    }
    const { base, timestamp, rates } = (body ?? {}) as { base?: unknown; timestamp?: unknown; rates?: unknown };
    if (base !== 'USD' || typeof rates !== 'object' || rates === null || typeof timestamp !== 'string' || !/^\d+$/.test(timestamp)) {
      throw new Error('Open Exchange Rates answered without a USD base, a timestamp and rates');
    }
    const age = Date.now() - Number(timestamp) * 1000;
    if (age > this.maxAgeMs) throw new Error(`Open Exchange Rates' rates are ${Math.round(age / 60_000)} minutes old`);
    const parsed = new Map<string, Decimal>([['USD', new Money(1)]]);
    for (const [currency, rate] of Object.entries(rates)) {
      if (typeof rate !== 'string' || !/^\d+(\.\d+)?([eE][-+]?\d+)?$/.test(rate) || new Money(rate).isZero()) {
        throw new Error(`Open Exchange Rates answered a malformed ${currency} rate`);
      }
      parsed.set(currency, new Money(rate));
    }
    return parsed;
  }
}

/**
 * The `message` of the documented error body (`{error: true, status, message, description}`, docs.openexchangerates.org
 * "Errors": invalid_app_id, missing_app_id, not_allowed, access_restricted, invalid_base, not_found), for the log and
 * the failure count; empty when the body is not one. The description is left out: it is prose, not a code.
 */
function errorMessage(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    const message = (body as { error?: unknown; message?: unknown } | null)?.message;
    return (body as { error?: unknown }).error === true && typeof message === 'string' && /^[a-z_]{1,40}$/.test(message)
      ? ` ${message}`
      : '';
  } catch {
    return '';
  }
}
