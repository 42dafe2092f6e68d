import { Body, Post } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { Doc, GatewayErrors } from '../common/openapi/api-docs';
import { AcknowledgementDto, AcknowledgementResult } from './acknowledgement.dto';
import { AcknowledgementsService } from './acknowledgements.service';

@GatewayController('transactions/acknowledge', 'split settlements')
export class AcknowledgementsController {
  constructor(private readonly acknowledgements: AcknowledgementsService) {}

  @Post()
  @GatewayOk()
  @Doc(
    "Confirm a payment's service",
    'SUCCESSFUL distributes the split settlements of the payment to the partner accounts; FAILED leaves them undistributed.',
  )
  @ApiOkResponse({ type: AcknowledgementResult })
  @GatewayErrors({
    400: 'invalid request, a payment not successful, or too little in the settlement wallet',
    404: 'no payment of the caller has this payment_id (120)',
    409: 'the payment was already acknowledged',
  })
  acknowledge(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: AcknowledgementDto) {
    return this.acknowledgements.acknowledge(client, body);
  }
}
