import { Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { FloatBalanceService } from './float-balance.service';

@GatewayController('v1/accounts', 'float balance')
@ApiBearerAuth()
export class FloatBalanceController {
  constructor(private readonly floats: FloatBalanceService) {}

  /** A settlement (float) wallet of the caller's: another client's wallet, or one no service pays from, is a 404. */
  @Get(':accountNumber/balance')
  @ApiOkResponse({
    schema: {
      properties: {
        balance: { type: 'string', example: '999890.0000', description: 'available' },
        currency: { type: 'string', example: 'KES' },
        status: { type: 'string', example: 'ACTIVE' },
        ledger_balance: { type: 'string', example: '1000000.0000', description: 'available + reserved' },
        reserved_balance: { type: 'string', example: '110.0000', description: 'held for payouts in flight' },
      },
    },
  })
  balance(@CurrentGatewayClient() client: GatewayPrincipal, @Param('accountNumber') accountNumber: string) {
    return this.floats.balanceOf(client.clientId, accountNumber);
  }
}
