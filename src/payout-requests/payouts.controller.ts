import { Body, Get, Param, Post } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { BodyExamples, Doc, PayoutErrors } from '../common/openapi/api-docs';
import { B2B_PAYOUT_EXAMPLES, IMT_PAYOUT_EXAMPLES, LOCAL_PAYOUT_EXAMPLES } from './payout.examples';
import { PayoutErrorFilter } from './payout-error.filter';
import { B2bPayoutDto, ImtPayoutDto, LocalPayoutDto, PayoutAcknowledgement } from './payout.dto';
import { PayoutRequestsService } from './payout-requests.service';
import { B2bResult, PayoutResult } from './payout.responses';

/** How a payout request is refused: nothing is held on the float either way. */
const PayoutRefusals = () =>
  PayoutErrors({
    400: 'rejected (721): invalid field, service, wallet or destination, or insufficient balance',
    409: 'duplicate ignored (722): a payout with this payout_reference exists',
    503: 'rejected (721, error_code FAILED): the rail to this destination is down; nothing is held on the float',
  });

/** Local payouts, international transfers and B2B payouts (disbursement document §4); errors in the payout body. */
@GatewayController('v1/payouts', 'payouts', PayoutErrorFilter)
export class PayoutsController {
  constructor(private readonly requests: PayoutRequestsService) {}

  @Post('initiate')
  @GatewayOk()
  @Doc(
    'Pay out to a mobile wallet or bank account',
    'Accepted with 720 and the amount plus fee held on the float; the result follows by callback and status query.',
  )
  @BodyExamples(LocalPayoutDto, LOCAL_PAYOUT_EXAMPLES)
  @ApiOkResponse({ type: PayoutAcknowledgement })
  @PayoutRefusals()
  initiate(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: LocalPayoutDto) {
    return this.requests.acceptLocal(client, body);
  }

  @Post('imt/initiate')
  @GatewayOk()
  @Doc(
    'Send an international money transfer',
    'Converted at the current FX rate; accepted with 720, the result follows by callback and status query.',
  )
  @BodyExamples(ImtPayoutDto, IMT_PAYOUT_EXAMPLES)
  @ApiOkResponse({ type: PayoutAcknowledgement })
  @PayoutRefusals()
  initiateImt(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: ImtPayoutDto) {
    return this.requests.acceptImt(client, body);
  }

  @Post('b2b/initiate')
  @GatewayOk()
  @Doc('Pay a business (paybill, till or bank)', 'Accepted with 720; the B2B result follows by callback and status query.')
  @BodyExamples(B2bPayoutDto, B2B_PAYOUT_EXAMPLES)
  @ApiOkResponse({ type: PayoutAcknowledgement })
  @PayoutRefusals()
  initiateB2b(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: B2bPayoutDto) {
    return this.requests.acceptB2b(client, body);
  }

  @Get('b2b/:payoutReference/status')
  @Doc('Status of a B2B payout', 'The B2B callback shape.')
  @ApiOkResponse({ type: B2bResult })
  @PayoutErrors({ 404: 'not found (723): no B2B payout of the caller has this reference' })
  b2bStatus(@CurrentGatewayClient() client: GatewayPrincipal, @Param('payoutReference') reference: string) {
    return this.requests.b2bStatus(client, reference);
  }

  @Get(':payoutReference/status')
  @Doc('Status of a payout or IMT', 'The payout callback shape.')
  @ApiOkResponse({ type: PayoutResult })
  @PayoutErrors({ 404: 'not found (723): no payout of the caller has this reference' })
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('payoutReference') reference: string) {
    return this.requests.status(client, reference);
  }
}
