import { Get, Query } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { GatewayError } from '../common/errors/gateway-error';
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
}
