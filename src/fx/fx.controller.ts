import { Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { isCurrency } from '../common/currencies';
import { GatewayError } from '../common/errors/gateway-error';
import { formatRate, FxService } from './fx.service';

const DEFAULT_BASE = 'KES';

/** FX rates (disbursement document §2 "FX rates response", §4): what one unit of each currency costs in the base. */
@GatewayController('v1/fx', 'fx')
export class FxController {
  constructor(private readonly fx: FxService) {}

  @Get()
  @ApiQuery({ name: 'base_currency', required: false, description: `ISO 4217 code; default ${DEFAULT_BASE}` })
  @ApiOkResponse({
    schema: {
      example: { base_currency: 'KES', rates: { USD: { buying: '128.5000', selling: '130.5000' } } },
      properties: {
        base_currency: { type: 'string' },
        rates: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { buying: { type: 'string' }, selling: { type: 'string' } } },
        },
      },
    },
  })
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
