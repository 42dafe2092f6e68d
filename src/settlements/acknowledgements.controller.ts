import { Body, Post } from '@nestjs/common';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { AcknowledgementsService, type AcknowledgementRequest } from './acknowledgements.service';

@GatewayController('transactions/acknowledge', 'split settlements')
export class AcknowledgementsController {
  constructor(private readonly acknowledgements: AcknowledgementsService) {}

  @Post()
  @GatewayOk()
  acknowledge(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: AcknowledgementRequest) {
    return this.acknowledgements.acknowledge(client, body);
  }
}
