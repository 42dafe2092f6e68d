import { Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { GATEWAY_CODES, GatewayError } from '../common/errors/gateway-error';
import { CallbacksService } from './callbacks.service';

/** Beyond the documents: merchants read the delivery log of the callbacks about one of their references. */
@GatewayController('v1/callbacks', 'callbacks')
export class CallbacksController {
  constructor(private readonly callbacks: CallbacksService) {}

  @Get()
  @ApiQuery({ name: 'reference', description: 'external_reference, merchant_transaction_id or reversal_reference' })
  log(@CurrentGatewayClient() client: GatewayPrincipal, @Query('reference') reference?: string) {
    if (typeof reference !== 'string' || !reference || reference.length > 64) throw GatewayError.validation('reference is required');
    return this.callbacks.log(client.clientId, reference);
  }

  @Post(':event_id/replay')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a callback again: same X-Event-Id and body, newly signed, to the URL it was sent to' })
  @ApiParam({ name: 'event_id', description: 'The X-Event-Id of the callback (event_id in the delivery log)' })
  async replay(@CurrentGatewayClient() client: GatewayPrincipal, @Param('event_id') eventId: string) {
    const replay = await this.callbacks.replay(client.clientId, eventId);
    if (!replay) throw new GatewayError(404, GATEWAY_CODES.NOT_FOUND, 'Event not found', `No callback event ${eventId}`);
    return { ...replay, status: 'QUEUED' };
  }
}
