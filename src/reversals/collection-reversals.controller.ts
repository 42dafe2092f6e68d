import { Body, Get, Param, Post } from '@nestjs/common';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { CollectionReversalDto } from './collection-reversal.dto';
import { CollectionReversalsService } from './collection-reversals.service';

@GatewayController('v1/reversals', 'collection reversals')
export class CollectionReversalsController {
  constructor(private readonly reversals: CollectionReversalsService) {}

  @Post('initiate')
  @GatewayOk()
  initiate(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: CollectionReversalDto) {
    return this.reversals.initiate(client, body);
  }

  @Get(':reversalReference/status')
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('reversalReference') reversalReference: string) {
    return this.reversals.status(client, reversalReference);
  }
}
