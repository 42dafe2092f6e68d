import { Body, Post } from '@nestjs/common';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { AcknowledgementDto } from './acknowledgement.dto';
import { AcknowledgementsService } from './acknowledgements.service';

@GatewayController('transactions/acknowledge', 'split settlements')
export class AcknowledgementsController {
  constructor(private readonly acknowledgements: AcknowledgementsService) {}

  @Post()
  @GatewayOk()
  acknowledge(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: AcknowledgementDto) {
    return this.acknowledgements.acknowledge(client, body);
  }
}
