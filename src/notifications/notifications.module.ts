import { Module } from '@nestjs/common';
import { NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';
import { SandboxSmsNotifier } from './sandbox-sms.notifier';
import { SMS_NOTIFIER } from './sms-notifier';

/** Messages to recipients: the SMS notifier adapter (sandbox: recorded only) and the merchant's read of them. */
@Module({
  providers: [NotificationsService, { provide: SMS_NOTIFIER, useClass: SandboxSmsNotifier }],
  controllers: [NotificationsController],
  exports: [NotificationsService],
})
export class NotificationsModule {}
