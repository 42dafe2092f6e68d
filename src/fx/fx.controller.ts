import { Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { isCurrency } from '../common/currencies';
import { GatewayError } from '../common/errors/gateway-error';
import { Doc, GatewayErrors } from '../common/openapi/api-docs';
import { FxRates } from './fx.responses';
import { formatRate, FxService } from './fx.service';

const DEFAULT_BASE = 'KES';

/** FX rates (disbursement document §2 "FX rates response", §4): what one unit of each currency costs in the base. */
@GatewayController('v1/fx', 'fx')
export class FxController {
  constructor(private readonly fx: FxService) {}

  @Get()
  @ApiQuery({ name: 'base_currency', required: false, description: `ISO 4217 code; default ${DEFAULT_BASE}` })
  @Doc('Current FX rates', 'Buying and selling price of one unit of each currency, in the base currency.')
  @ApiOkResponse({ type: FxRates })
  @GatewayErrors({ 400: 'base_currency is not a supported ISO 4217 code', 404: 'no current rates for the base currency' })
  async rates(@Query('base_currency') base: unknown = DEFAULT_BASE) {
    if (!isCurrency(base)) throw GatewayError.validation('base_currency must be a supported ISO 4217 currency code');
    const rates = await this.fx.ratesFor(base);
    if (!rates) throw GatewayError.notFound(`No current exchange rates for base currency ${base}`);
    return {
      base_currency: base,
      rates: Object.fromEntries(rates.map((r) => [r.currency, { buying: formatRate(r.buying), selling: formatRate(r.selling) }])),
    };
  }
}
