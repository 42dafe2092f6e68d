import { Body, Get, Param, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { PayoutErrorFilter } from './payout-error.filter';
import { B2bPayoutDto, B2bResult, ImtPayoutDto, LocalPayoutDto, PayoutAcknowledgement, PayoutErrorBody, PayoutResult } from './payout.dto';
import { PayoutRequestsService } from './payout-requests.service';

/** Local payouts, international transfers and B2B payouts (disbursement document §4); errors in the payout body. */
@GatewayController('v1/payouts', 'payouts', PayoutErrorFilter)
@ApiBearerAuth()
@ApiBadRequestResponse({ type: PayoutErrorBody, description: '721: rejected (validation, service, insufficient float)' })
export class PayoutsController {
  constructor(private readonly requests: PayoutRequestsService) {}

  @Post('initiate')
  @GatewayOk()
  @ApiOkResponse({ type: PayoutAcknowledgement })
  @ApiConflictResponse({ type: PayoutErrorBody, description: '722: a payout with this payout_reference exists' })
  initiate(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: LocalPayoutDto) {
    return this.requests.acceptLocal(client, body);
  }

  @Post('imt/initiate')
  @GatewayOk()
  @ApiOkResponse({ type: PayoutAcknowledgement })
  @ApiConflictResponse({ type: PayoutErrorBody, description: '722: a payout with this payout_reference exists' })
  initiateImt(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: ImtPayoutDto) {
    return this.requests.acceptImt(client, body);
  }

  @Post('b2b/initiate')
  @GatewayOk()
  @ApiOkResponse({ type: PayoutAcknowledgement })
  @ApiConflictResponse({ type: PayoutErrorBody, description: '722: a payout with this payout_reference exists' })
  initiateB2b(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: B2bPayoutDto) {
    return this.requests.acceptB2b(client, body);
  }

  @Get('b2b/:payoutReference/status')
  @ApiOkResponse({ type: B2bResult })
  @ApiNotFoundResponse({ type: PayoutErrorBody, description: '723: unknown payout_reference' })
  b2bStatus(@CurrentGatewayClient() client: GatewayPrincipal, @Param('payoutReference') reference: string) {
    return this.requests.b2bStatus(client, reference);
  }

  @Get(':payoutReference/status')
  @ApiOkResponse({ type: PayoutResult })
  @ApiNotFoundResponse({ type: PayoutErrorBody, description: '723: unknown payout_reference' })
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('payoutReference') reference: string) {
    return this.requests.status(client, reference);
  }
}
