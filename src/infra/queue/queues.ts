/**
 * The outbox topics, `<area>.<work>`: each is a BullMQ queue of its own, named as the topic, so that every money path
 * has its own lane (its own concurrency, its own backlog in the queue dashboard) and none waits behind another.
 */
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

/** The outbox's queues: one per topic. */
export const QUEUES: readonly Topic[] = Object.values(TOPICS);

/**
 * Callback deliveries: not an outbox topic (the delivery row is its own outbox, CallbackRelay hands it over), a job
 * per delivery that lives until the delivery is DELIVERED or FAILED, delayed between its attempts.
 */
export const CALLBACKS_QUEUE = 'callbacks.deliver';

/** Every BullMQ queue: registered, measured and shown in the queue dashboard. */
export const ALL_QUEUES: readonly string[] = [...QUEUES, CALLBACKS_QUEUE];

export interface Lane {
  /** The most outbox rows (of one client) one job carries, and so one handler call gets. */
  group: number;
  /** The jobs of the topic a worker process runs at once. */
  concurrency: number;
}

/**
 * Each topic's lane: groups sized to what its handler books in one transaction, and how many groups a worker runs
 * at once. Checkout expiry and reversals step one record at a time, so their groups run their items side by side.
 */
export const LANES: Record<Topic, Lane> = {
  [TOPICS.settlePayment]: { group: 100, concurrency: 2 },
  [TOPICS.expireCheckout]: { group: 50, concurrency: 2 },
  [TOPICS.processReversal]: { group: 50, concurrency: 2 },
  // Slices of RECIPIENTS_PER_JOB recipients each: a 1,000-recipient request is one group.
  [TOPICS.processAirtime]: { group: 20, concurrency: 2 },
  [TOPICS.recheckAirtime]: { group: 100, concurrency: 2 },
  [TOPICS.processPayout]: { group: 100, concurrency: 2 },
  [TOPICS.recheckPayout]: { group: 100, concurrency: 2 },
  [TOPICS.sendNotification]: { group: 100, concurrency: 2 },
};

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
