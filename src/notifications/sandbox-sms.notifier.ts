import { Injectable } from '@nestjs/common';
import { Sms, SmsNotifier } from './sms-notifier';

/** The sandbox SMS gateway: nothing leaves; the message stays recorded in notifications, readable by the merchant. */
@Injectable()
export class SandboxSmsNotifier implements SmsNotifier {
  async send(sms: Sms): Promise<{ providerReference: string }> {
    return { providerReference: `SBX-SMS-${sms.notificationId}` };
  }
}
