import { Body, Get, Param, Post } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { ApiErrors, Doc, GatewayErrors } from '../common/openapi/api-docs';
import { ReversalErrorBody } from '../common/openapi/error-bodies';
import { CollectionReversalDto } from './collection-reversal.dto';
import { ReversalAccepted, ReversalResult } from './collection-reversal.responses';
import { CollectionReversalsService } from './collection-reversals.service';

@GatewayController('v1/reversals', 'collection reversals')
export class CollectionReversalsController {
  constructor(private readonly reversals: CollectionReversalsService) {}

  @Post('initiate')
  @GatewayOk()
  @Doc('Reverse a collected payment', 'Accepted as pending; the result follows by callback and status query.')
  @ApiOkResponse({ type: ReversalAccepted })
  @ApiErrors(ReversalErrorBody, {
    400: 'Validation Failed (172): Transaction Already Reversed, Invalid Payment Reference, Duplicate Reversal Reference or Transaction Not Eligible for Reversal',
  })
  initiate(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: CollectionReversalDto) {
    return this.reversals.initiate(client, body);
  }

  @Get(':reversalReference/status')
  @Doc('Status of a collection reversal', 'The reversal callback shape.')
  @ApiOkResponse({ type: ReversalResult })
  @GatewayErrors({ 404: 'no reversal of the caller has this reference (120)' })
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('reversalReference') reversalReference: string) {
    return this.reversals.status(client, reversalReference);
  }
}
