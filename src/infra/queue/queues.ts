/**
 * The BullMQ queue and the outbox topics: `<area>.<work>`. Topics of CLAIMED_TOPICS are claimed from the outbox by the
 * workers; the others are relayed to the queue named by their area, as jobs named by their work.
 */
export const QUEUES = {
  payments: 'payments',
  reversals: 'reversals',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const TOPICS = {
  settlePayment: 'payments.settle',
  expireCheckout: 'payments.expire-checkout',
  processReversal: 'reversals.process',
  processAirtime: 'airtime.process',
  recheckAirtime: 'airtime.recheck',
  processPayout: 'payouts.process',
  recheckPayout: 'payouts.recheck',
  sendNotification: 'notifications.send',
} as const;
export type Topic = (typeof TOPICS)[keyof typeof TOPICS];

/**
 * A payments.settle job names the payment to settle by its id under this one key: built by settlePaymentJob for the
 * TypeScript producers (PaymentsService.scheduleSettlement, a rail's answer), given to a charge's acceptance SQL
 * (collection_accept_charge's p_settle_key), and read by the consumer, PaymentsProcessor.
 */
export const SETTLE_PAYMENT_KEY = 'paymentId';

/** The payload of a payments.settle job: the payment to settle. */
export function settlePaymentJob(paymentId: string): Record<string, string> {
  return { [SETTLE_PAYMENT_KEY]: paymentId };
}

/**
 * Topics whose work the workers claim straight from the outbox, many rows per query (OutboxClaimer), instead of one
 * BullMQ job per row: the money paths' follow-ups, where a job's Redis round trips cost more than the work.
 */
export const CLAIMED_TOPICS: readonly Topic[] = [
  TOPICS.settlePayment,
  TOPICS.processAirtime,
  TOPICS.recheckAirtime,
  TOPICS.processPayout,
  TOPICS.recheckPayout,
  TOPICS.sendNotification,
];

export function queueOf(topic: string): { queue: QueueName; job: string } {
  const [queue, job] = topic.split('.');
  return { queue: queue as QueueName, job };
}
