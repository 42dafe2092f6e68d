import { Body, Post, UseFilters } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { PaymentStatementErrorFilter } from '../common/errors/http-error.filter';
import { BadRequestOrUnreadable, Doc } from '../common/openapi/api-docs';
import { PaymentStatementErrorBody } from '../common/openapi/error-bodies';
import { PaymentStatementDto, PaymentStatementRow } from './payment-statement.dto';
import { PaymentStatementService } from './payment-statement.service';

@GatewayController('v1/statement', 'payment statement')
export class PaymentStatementController {
  constructor(private readonly statements: PaymentStatementService) {}

  /** Statement errors have a body shape of their own. */
  @Post()
  @GatewayOk()
  @Doc('Statement of collected payments', 'Payments created in [start_date, end_date], oldest first, paged by offset and limit.')
  @ApiOkResponse({ type: [PaymentStatementRow] })
  @BadRequestOrUnreadable(PaymentStatementErrorBody, "invalid dates, offset or limit (the statement's body)")
  @UseFilters(PaymentStatementErrorFilter)
  statement(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: PaymentStatementDto) {
    return this.statements.statement(client, body);
  }
}
