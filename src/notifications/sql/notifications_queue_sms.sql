-- Queues SMS messages: one per client, reference and channel (a repeat is left as it is), each with its sending job
-- in the outbox (topic notifications.send, TOPICS.sendNotification), in the caller's transaction. The one writer of
-- notifications: NotificationsService.queueSms and the float's low-balance alert (float_low_balance_follow).
CREATE OR REPLACE FUNCTION notifications_queue_sms(p_client_ids uuid[], p_references text[], p_recipients text[], p_messages text[])
RETURNS void
LANGUAGE plpgsql
AS $fn$
BEGIN
  WITH queued AS (
    INSERT INTO notifications (client_id, reference, channel, recipient, message)
    SELECT m.client_id, m.reference, 'SMS', m.recipient, m.message
    FROM unnest(p_client_ids, p_references, p_recipients, p_messages) WITH ORDINALITY m(client_id, reference, recipient, message, n)
    ORDER BY m.n
    ON CONFLICT (client_id, reference, channel) DO NOTHING RETURNING id, client_id
  )
  INSERT INTO outbox (client_id, topic, payload)
  SELECT queued.client_id, 'notifications.send', jsonb_build_object('notificationId', queued.id::text) FROM queued;
END
$fn$;
