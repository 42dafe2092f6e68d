import { Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController } from '../auth/gateway/gateway-controller.decorator';
import { GatewayError } from '../common/errors/gateway-error';
import { LIMITS } from '../common/validation/validators';
import { Doc, GatewayErrors } from '../common/openapi/api-docs';
import { NotificationList } from './notification.responses';
import { NotificationsService } from './notifications.service';

@GatewayController('v1/notifications', 'notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  /** The messages sent to recipients about one of the caller's references (the SMS after a local payout). */
  @Get()
  @Doc('Messages sent about a payout', 'The SMS sent to the recipient after a local payout, with its delivery status.')
  @ApiQuery({ name: 'reference', required: true, description: 'a payout_reference' })
  @ApiOkResponse({ type: NotificationList })
  @GatewayErrors({ 400: 'reference missing or too long' })
  async list(@CurrentGatewayClient() client: GatewayPrincipal, @Query('reference') reference: unknown) {
    if (typeof reference !== 'string' || !reference.trim() || reference.length > LIMITS.reference) {
      throw GatewayError.validation(`reference must be a non-empty string of at most ${LIMITS.reference} characters`);
    }
    return { reference, notifications: await this.notifications.list(client.clientId, reference) };
  }
}
