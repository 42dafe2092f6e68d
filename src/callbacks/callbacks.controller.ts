import { Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { GatewayError } from '../common/errors/gateway-error';
import { Doc, GatewayErrors } from '../common/openapi/api-docs';
import { CallbackLog } from './callback-log.responses';
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
}
