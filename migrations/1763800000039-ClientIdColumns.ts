import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every table distributed by client (docs/scaling.md, "What must change first", item 2) gets its client: a not-null
 * `client_id uuid`, filled from the row it already references. An operator callback that matched no request of ours
 * has no client: it moves to `unmatched_rail_callbacks`, a table of the coordinator (partitioned by month like
 * rail_callbacks, so partitions:ensure and partitions:archive take it too). An outbox row is given the client of the
 * record its payload names (topic by topic, below); a row whose record is gone, or of a topic no code handles any
 * more, is deleted: no worker would do anything with it (docs/decisions.md, "The outbox").
 *
 * Keys stay as they are here: widening them to carry client_id is a later step.
 *
 * Cost on a large database: one transaction that takes ACCESS EXCLUSIVE on the eight tables (adding the column) and
 * holds it to commit, so the money paths wait for the whole run: run it in a quiet window. Adding the column is
 * catalog-only; the fill rewrites every row once (postings is the largest: about its size again in WAL and in dead
 * rows until vacuum) and SET NOT NULL reads each table once more. On the partitioned tables (postings,
 * callback_attempts, rail_callbacks) the parent's column, fill and NOT NULL reach every attached partition; months
 * already archived (schema `archive`) are detached and keep their old shape. The locks are all taken first, in one
 * statement and in the order a money transaction reaches these tables; each try waits at most 500 ms, 20 tries, and a
 * run that cannot get them (a long transaction in the way) fails having changed nothing.
 */
export class ClientIdColumns1763800000039 implements MigrationInterface {
  name = 'ClientIdColumns1763800000039';

  async up(q: QueryRunner): Promise<void> {
    // Each try waits at most 500 ms, below deadlock_timeout (1 s): should a cycle with a money transaction form, this
    // side gives up first and tries again, as partitions:ensure does.
    await q.query(`
      DO $$
      BEGIN
        SET LOCAL lock_timeout = '500ms';
        FOR i IN 1 .. 20 LOOP
          BEGIN
            LOCK TABLE ${TABLES.join(', ')} IN ACCESS EXCLUSIVE MODE;
            RETURN;
          EXCEPTION WHEN lock_not_available THEN
            PERFORM pg_sleep(0.5);
          END;
        END LOOP;
        RAISE EXCEPTION 'could not lock the tables that get client_id in 20 tries: run it when the money paths are quiet';
      END
      $$`);
    await q.query(`RESET lock_timeout`);
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} ADD COLUMN client_id uuid`);

    await q.query(`
      UPDATE postings p SET client_id = e.client_id FROM journal_entries e WHERE e.id = p.entry_id;
      UPDATE airtime_recipients r SET client_id = q.client_id FROM airtime_requests q WHERE q.id = r.request_id;
      UPDATE callback_attempts a SET client_id = d.client_id FROM callback_deliveries d WHERE d.id = a.delivery_id;
      UPDATE client_service_fee_tiers t SET client_id = s.client_id FROM client_services s WHERE s.id = t.client_service_id;
      UPDATE client_service_partners t SET client_id = s.client_id FROM client_services s WHERE s.id = t.client_service_id;
    `);
    // A rail request's subject, by kind (RailRequestsRepository's SubjectKind); recipients are filled above.
    for (const [kind, table] of Object.entries(RAIL_SUBJECTS)) {
      await q.query(
        `UPDATE rail_requests r SET client_id = s.client_id FROM ${table} s WHERE r.subject_kind = $1 AND s.id::text = r.subject_id`,
        [kind],
      );
    }
    await q.query(`
      CREATE TABLE unmatched_rail_callbacks (
        id             bigserial,
        rail           text NOT NULL,
        kind           text NOT NULL,
        source_address text NOT NULL,
        payload        jsonb NOT NULL,
        received_at    timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (id, received_at)
      ) PARTITION BY RANGE (received_at);
      CREATE TABLE unmatched_rail_callbacks_default PARTITION OF unmatched_rail_callbacks DEFAULT;
      CREATE INDEX unmatched_rail_callbacks_kind_ix ON unmatched_rail_callbacks (rail, kind, received_at);
      INSERT INTO unmatched_rail_callbacks (rail, kind, source_address, payload, received_at)
        SELECT rail, kind, source_address, payload, received_at FROM rail_callbacks WHERE rail_request_id IS NULL ORDER BY id;
      DELETE FROM rail_callbacks WHERE rail_request_id IS NULL;
      UPDATE rail_callbacks c SET client_id = r.client_id FROM rail_requests r WHERE r.id = c.rail_request_id;
    `);
    // An outbox row's client is its record's, found by the key of its topic's payload (the topics of every build).
    for (const { topics, key, table } of OUTBOX_SUBJECTS) {
      await q.query(
        `UPDATE outbox o SET client_id = s.client_id FROM ${table} s WHERE o.topic = ANY ($1) AND s.id::text = o.payload->>$2`,
        [topics, key],
      );
    }
    await q.query(`DELETE FROM outbox WHERE client_id IS NULL`);

    for (const table of TABLES) await q.query(`ALTER TABLE ${table} ALTER COLUMN client_id SET NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO rail_callbacks (rail, kind, rail_request_id, source_address, payload, effect, received_at, client_id)
        SELECT rail, kind, NULL, source_address, payload, 'UNMATCHED', received_at, NULL FROM unmatched_rail_callbacks ORDER BY id;
      DROP TABLE unmatched_rail_callbacks;
    `);
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} DROP COLUMN client_id`);
  }
}

/**
 * In the order a money transaction reaches them: the service's fee tiers and partners are read before the entry's
 * postings are written, then come its business rows and their follow-up work.
 */
const TABLES = [
  'client_service_fee_tiers',
  'client_service_partners',
  'postings',
  'airtime_recipients',
  'rail_requests',
  'rail_callbacks',
  'outbox',
  'callback_attempts',
];

const RAIL_SUBJECTS: Record<string, string> = {
  PAYMENT: 'payments',
  PAYOUT: 'payouts',
  REVERSAL: 'collection_reversals',
  AIRTIME: 'airtime_recipients',
};

const OUTBOX_SUBJECTS = [
  { topics: ['payments.settle'], key: 'paymentId', table: 'payments' },
  { topics: ['payments.expire-checkout'], key: 'sessionId', table: 'checkout_sessions' },
  { topics: ['reversals.process', 'payments.reverse'], key: 'reversalId', table: 'collection_reversals' },
  { topics: ['payouts.process', 'payouts.recheck'], key: 'payoutId', table: 'payouts' },
  { topics: ['airtime.process'], key: 'requestId', table: 'airtime_requests' },
  { topics: ['airtime.recheck'], key: 'recipientId', table: 'airtime_recipients' },
  { topics: ['notifications.send'], key: 'notificationId', table: 'notifications' },
  { topics: ['callbacks.deliver'], key: 'deliveryId', table: 'callback_deliveries' },
];
