/** BullMQ queues and the outbox topics that feed them: `<queue>.<job name>`. */
export const QUEUES = {
  payments: 'payments',
  airtime: 'airtime',
  payouts: 'payouts',
  notifications: 'notifications',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const TOPICS = {
  settlePayment: 'payments.settle',
  expireCheckout: 'payments.expire-checkout',
  processReversal: 'payments.reverse',
  processAirtime: 'airtime.process',
  recheckAirtime: 'airtime.recheck',
  processPayout: 'payouts.process',
  recheckPayout: 'payouts.recheck',
  sendNotification: 'notifications.send',
} as const;
export type Topic = (typeof TOPICS)[keyof typeof TOPICS];

export function queueOf(topic: string): { queue: QueueName; job: string } {
  const [queue, job] = topic.split('.');
  return { queue: queue as QueueName, job };
}
