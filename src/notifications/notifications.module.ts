import { Module } from '@nestjs/common';
import { NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';
import { SandboxSmsNotifier } from './sandbox-sms.notifier';
import { SMS_NOTIFIER } from './sms-notifier';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** Messages to recipients: the SMS notifier adapter (sandbox: recorded only) and the merchant's read of them. */
@Module({
  imports: [GatewayAuthModule],
  providers: [NotificationsService, { provide: SMS_NOTIFIER, useClass: SandboxSmsNotifier }],
  controllers: [NotificationsController],
  exports: [NotificationsService],
})
export class NotificationsModule {}
