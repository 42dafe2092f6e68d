import { Get, Query } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { GatewayError } from '../common/errors/gateway-error';
import { LIMITS } from '../common/validation/validators';
import { NotificationsService } from './notifications.service';

@GatewayController('v1/notifications', 'notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  /** The messages sent to recipients about one of the caller's references (the SMS after a local payout). */
  @Get()
  @ApiQuery({ name: 'reference', required: true, description: 'a payout_reference' })
  async list(@CurrentGatewayClient() client: GatewayPrincipal, @Query('reference') reference: unknown) {
    if (typeof reference !== 'string' || !reference.trim() || reference.length > LIMITS.reference) {
      throw GatewayError.validation(`reference must be a non-empty string of at most ${LIMITS.reference} characters`);
    }
    return { reference, notifications: await this.notifications.list(client.clientId, reference) };
  }
}
