import { Get, Param } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { Doc, GatewayErrors } from '../common/openapi/api-docs';
import { FloatBalanceService } from './float-balance.service';
import { FloatBalance } from './float-balance.responses';

@GatewayController('v1/accounts', 'float balance')
export class FloatBalanceController {
  constructor(private readonly floats: FloatBalanceService) {}

  /** A settlement (float) wallet of the caller's: another client's wallet, or one no service pays from, is a 404. */
  @Get(':accountNumber/balance')
  @Doc('Balance of a float wallet', 'Available, reserved (held for payouts in flight) and ledger balance.')
  @ApiOkResponse({ type: FloatBalance })
  @GatewayErrors({ 404: 'no float wallet of the caller has this account number (120)' })
  balance(@CurrentGatewayClient() client: GatewayPrincipal, @Param('accountNumber') accountNumber: string) {
    return this.floats.balanceOf(client.clientId, accountNumber);
  }
}
