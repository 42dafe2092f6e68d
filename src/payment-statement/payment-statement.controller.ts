import { Body, Post } from '@nestjs/common';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { PaymentStatementService, type PaymentStatementRequest } from './payment-statement.service';

/** Validation happens in the service: statement errors have a body shape of their own. */
@GatewayController('v1/statement', 'payment statement')
export class PaymentStatementController {
  constructor(private readonly statements: PaymentStatementService) {}

  @Post()
  @GatewayOk()
  statement(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: PaymentStatementRequest) {
    return this.statements.statement(client, body ?? {});
  }
}
