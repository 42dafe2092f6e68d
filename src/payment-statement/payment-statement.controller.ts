import { Body, Post, UseFilters } from '@nestjs/common';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { PaymentStatementErrorFilter } from '../common/errors/http-error.filter';
import { PaymentStatementDto } from './payment-statement.dto';
import { PaymentStatementService } from './payment-statement.service';

@GatewayController('v1/statement', 'payment statement')
export class PaymentStatementController {
  constructor(private readonly statements: PaymentStatementService) {}

  /** Statement errors have a body shape of their own. */
  @Post()
  @GatewayOk()
  @UseFilters(PaymentStatementErrorFilter)
  statement(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: PaymentStatementDto) {
    return this.statements.statement(client, body);
  }
}
