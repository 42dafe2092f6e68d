import { Body, Post, UseFilters } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { PaymentStatementErrorFilter } from '../common/errors/http-error.filter';
import { Doc } from '../common/openapi/api-docs';
import { GatewayErrorBody, PaymentStatementErrorBody } from '../common/openapi/error-bodies';
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
  @ApiExtraModels(PaymentStatementErrorBody, GatewayErrorBody)
  @ApiResponse({
    status: 400,
    description: "invalid dates, offset or limit (the statement's body); a body that is not JSON (the gateway's)",
    schema: { oneOf: [{ $ref: getSchemaPath(PaymentStatementErrorBody) }, { $ref: getSchemaPath(GatewayErrorBody) }] },
  })
  @UseFilters(PaymentStatementErrorFilter)
  statement(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: PaymentStatementDto) {
    return this.statements.statement(client, body);
  }
}
