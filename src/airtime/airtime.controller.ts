import { Body, Get, Param, Post } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse } from '@nestjs/swagger';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { AirtimeAcknowledgement, AirtimeErrorBody, AirtimeRecipientResult, AirtimeRequestDto } from './airtime.dto';
import { AirtimeService } from './airtime.service';
import { AirtimeErrorFilter } from './airtime-error.filter';
import { ApiErrors, BadRequestOrUnreadable, Doc } from '../common/openapi/api-docs';

@GatewayController('v1/gw/airtime', 'airtime', AirtimeErrorFilter)
export class AirtimeController {
  constructor(private readonly airtime: AirtimeService) {}

  @Post('send')
  @GatewayOk()
  @Doc(
    'Send airtime to up to 1000 numbers',
    "Accepted with 720 and the total held on the float; each recipient's result follows by callback and status query.",
  )
  @ApiOkResponse({ type: AirtimeAcknowledgement, description: '720: accepted; results follow by callback and status query' })
  @BadRequestOrUnreadable(AirtimeErrorBody, '721: refused, nothing stored')
  @ApiConflictResponse({ type: AirtimeErrorBody, description: '722: the reference was used before' })
  @ApiErrors(AirtimeErrorBody, { 503: '721 (error_code FAILED): the airtime provider is down; nothing is held on the float' })
  send(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: AirtimeRequestDto) {
    return this.airtime.send(client, body);
  }

  @Get(':reference/status')
  @Doc('Results of an airtime request', 'One result per recipient, in request order.')
  @ApiOkResponse({ type: [AirtimeRecipientResult], description: 'one result per recipient, in request order' })
  @ApiNotFoundResponse({ type: AirtimeErrorBody, description: '723: no request of the caller has this reference' })
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('reference') reference: string) {
    return this.airtime.status(client, reference);
  }
}
