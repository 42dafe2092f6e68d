/** One text message to a phone number. */
export interface Sms {
  /** Our notification id: the gateway's idempotency key, so a re-sent job sends once. */
  notificationId: string;
  to: string;
  message: string;
}

/** An SMS gateway. The sandbox one only records; a real provider's adapter replaces it in production. */
export interface SmsNotifier {
  send(sms: Sms): Promise<{ providerReference: string }>;
}

export const SMS_NOTIFIER = Symbol('SMS_NOTIFIER');
