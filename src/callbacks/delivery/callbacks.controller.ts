import { Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../../auth/gateway/gateway-principal';
import { GatewayController } from '../../auth/gateway/gateway-controller.decorator';
import { GATEWAY_CODES, GatewayError } from '../../common/errors/gateway-error';
import { Doc, GatewayErrors, NoRequestBody } from '../../common/openapi/api-docs';
import { CallbackLog, CallbackReplay } from './callback-log.responses';
import { CallbacksService } from './callbacks.service';

/** Beyond the documents: merchants read the delivery log of the callbacks about one of their references. */
@GatewayController('v1/callbacks', 'callbacks')
export class CallbacksController {
  constructor(private readonly callbacks: CallbacksService) {}

  @Get()
  @Doc(
    'Callback deliveries about a reference',
    'Every callback sent about one of your references, with each attempt (time, HTTP status, latency, error).',
  )
  @ApiOkResponse({ type: CallbackLog })
  @GatewayErrors({ 400: 'reference missing or longer than 64 characters' })
  @ApiQuery({ name: 'reference', description: 'external_reference, merchant_transaction_id or reversal_reference' })
  log(@CurrentGatewayClient() client: GatewayPrincipal, @Query('reference') reference?: string) {
    if (typeof reference !== 'string' || !reference || reference.length > 64) throw GatewayError.validation('reference is required');
    return this.callbacks.log(client.clientId, reference);
  }

  @Post(':event_id/replay')
  @HttpCode(202)
  @Doc('Send a callback again', 'Same X-Event-Id and body, newly signed, to the URL it was sent to; recorded as a replay attempt.')
  @NoRequestBody()
  @ApiResponse({ status: 202, type: CallbackReplay })
  @GatewayErrors({ 404: 'no callback event of the caller has this id' })
  @ApiParam({ name: 'event_id', description: 'The X-Event-Id of the callback (event_id in the delivery log)' })
  async replay(@CurrentGatewayClient() client: GatewayPrincipal, @Param('event_id') eventId: string) {
    const replay = await this.callbacks.replay(client.clientId, eventId);
    if (!replay) throw new GatewayError(404, GATEWAY_CODES.NOT_FOUND, 'Event not found', `No callback event ${eventId}`);
    return { ...replay, status: 'QUEUED' };
  }
}
