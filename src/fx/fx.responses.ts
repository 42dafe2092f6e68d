import { ApiProperty } from '@nestjs/swagger';

/** FX rates response (disbursement document §2): what one unit of each currency costs in the base currency. */
export class FxRates {
  @ApiProperty({ example: 'KES' }) base_currency: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', properties: { buying: { type: 'string' }, selling: { type: 'string' } } },
    example: { USD: { buying: '128.5000', selling: '130.5000' } },
    description: 'keyed by ISO 4217 currency code',
  })
  rates: Record<string, { buying: string; selling: string }>;
}
