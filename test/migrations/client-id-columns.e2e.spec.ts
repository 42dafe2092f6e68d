import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { ClientIdColumns1763800000039 } from '../../migrations/1763800000039-ClientIdColumns';
import { scratchDatabase } from '../support/child-processes';

jest.setTimeout(120_000);

const DIR = join(__dirname, '..', '..', 'migrations');
const BEFORE = '1763800000039';

/** Migrations 000-038, as a database that has not yet run 039 has them. */
function migrationsBefore039(): (new () => MigrationInterface)[] {
  return (
    readdirSync(DIR)
      .filter((file) => file.endsWith('.ts') && file < BEFORE)
      .sort()
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      .map((file) => Object.values(require(join(DIR, file)) as Record<string, new () => MigrationInterface>)[0])
  );
}

/** What one client's rows are, by table: the ids the test checks after the migration. */
type Rows = Record<string, string[]>;

/** One client with a row in every table that gets client_id, and the records those rows point at. */
async function seedClient(db: Client, code: string): Promise<{ clientId: string; rows: Rows; outbox: Record<string, string> }> {
  const one = async (sql: string, params: unknown[] = []) => String((await db.query(sql, params)).rows[0].id);
  const clientId = await one(`INSERT INTO clients (code, name) VALUES ($1, $1) RETURNING id`, [code]);
  const wallet = await one(`INSERT INTO ledger_accounts (client_id, kind, currency) VALUES ($1, 'WALLET', 'KES') RETURNING id`, [clientId]);
  const other = await one(`INSERT INTO ledger_accounts (client_id, kind, currency) VALUES ($1, 'WALLET', 'KES') RETURNING id`, [clientId]);
  const service = await one(
    `INSERT INTO client_services (client_id, name, service_code, has_transaction_fee, minimum_transaction_amount,
       maximum_transaction_amount, is_active, settlement_account_id)
     VALUES ($1, $2, $2, true, 1, 1000, 1, $3) RETURNING id`,
    [clientId, `S${code}`, wallet],
  );
  const tier = await one(
    `INSERT INTO client_service_fee_tiers (client_service_id, minimum_amount, maximum_amount, fee_type, fee)
     VALUES ($1, 1, 1000, 'FIXED', 10) RETURNING id`,
    [service],
  );
  await db.query(`INSERT INTO client_service_partners (client_service_id, account_id) VALUES ($1, $2)`, [service, other]);
  const entry = await one(`INSERT INTO journal_entries (client_id, kind) VALUES ($1, 'TRANSFER') RETURNING id`, [clientId]);
  const postings = (
    await db.query(
      `INSERT INTO postings (entry_id, account_id, currency, amount, balance_after)
       VALUES ($1, $2, 'KES', -5, -5), ($1, $3, 'KES', 5, 5) RETURNING id`,
      [entry, wallet, other],
    )
  ).rows.map((row) => String(row.id));
  const reservation = await one(
    `INSERT INTO float_reservations (client_id, float_account_id, rail, currency, reserve_entry_id)
     VALUES ($1, $2, 'IN_FLIGHT_AIRTIME', 'KES', $3) RETURNING id`,
    [clientId, wallet, entry],
  );
  const hold = await one(
    `INSERT INTO float_holds (reservation_id, client_id, float_account_id, amount, fee) VALUES ($1, $2, $3, 5, 0) RETURNING id`,
    [reservation, clientId, wallet],
  );
  const airtimeRequest = await one(
    `INSERT INTO airtime_requests (client_id, reference, client_service_id, currency, recipient_count, reservation_id)
     VALUES ($1, 'A1', $2, 'KES', 1, $3) RETURNING id`,
    [clientId, service, reservation],
  );
  const recipient = await one(
    `INSERT INTO airtime_recipients (request_id, position, phone_number, amount, fee, hold_id, message)
     VALUES ($1, 1, '254700000001', 5, 0, $2, '') RETURNING id`,
    [airtimeRequest, hold],
  );
  const payment = await one(
    `INSERT INTO payments (client_id, client_service_id, external_reference, request_fingerprint, origin_channel_code,
       originator_msisdn, payer_msisdn, payer_email, account_number, invoice_number, currency, country_code,
       service_amount, transaction_charge, total_amount, merchant_fee, add_transaction_charge, payment_method_code,
       extra_data, description, notify_client, notify_originator, callback_url)
     VALUES ($1, $2, 'P1', 'f', 'WEB', '254700000001', '254700000001', '', '', '', 'KES', 'KEN', 5, 0, 5, 0, false,
       'MMONEY', '{}', '', false, false, 'https://merchant.example/cb') RETURNING id`,
    [clientId, service],
  );
  const session = await one(
    `INSERT INTO checkout_sessions (checkout_reference, client_id, client_service_id, merchant_transaction_id,
       request_fingerprint, amount, currency, payer_name, payer_email, payer_msisdn, account_number, narration,
       callback_url, redirect_url, expires_at)
     VALUES ($1, $2, $3, 'M1', 'f', 5, 'KES', '', '', '', '', '', 'https://merchant.example/cb',
       'https://merchant.example/back', now() + interval '1 hour') RETURNING id`,
    [`CK${code}`, clientId, service],
  );
  const reversal = await one(
    `INSERT INTO collection_reversals (client_id, reversal_reference, payment_id, reversal_reason) VALUES ($1, 'R1', $2, 'x') RETURNING id`,
    [clientId, payment],
  );
  const payout = await one(
    `INSERT INTO payouts (client_id, kind, payout_reference, client_service_id, float_account_id, amount, fee, currency,
       destination_type, destination_name, recipient_account_number, request, callback_url)
     VALUES ($1, 'LOCAL', 'PO1', $2, $3, 5, 0, 'KES', 'MOBILE', 'MPESA', '254700000001', '{}', 'https://merchant.example/cb')
     RETURNING id`,
    [clientId, service, wallet],
  );
  const notification = await one(
    `INSERT INTO notifications (client_id, reference, channel, recipient, message) VALUES ($1, 'N1', 'SMS', '254700000001', 'hi')
     RETURNING id`,
    [clientId],
  );
  const delivery = await one(
    `INSERT INTO callback_deliveries (client_id, event, reference, url, payload, kind)
     VALUES ($1, 'payment', 'P1', 'https://merchant.example/cb', '{}', 'collections') RETURNING id`,
    [clientId],
  );
  const attempt = await one(
    `INSERT INTO callback_attempts (delivery_id, attempt, attempted_at, http_status, latency_ms) VALUES ($1, 1, now(), 200, 5) RETURNING id`,
    [delivery],
  );
  const railRequests: string[] = [];
  const railCallbacks: string[] = [];
  for (const [kind, subject] of [
    ['PAYMENT', payment],
    ['PAYOUT', payout],
    ['REVERSAL', reversal],
    ['AIRTIME', recipient],
  ]) {
    const request = await one(
      `INSERT INTO rail_requests (rail, operation, subject_kind, subject_id, amount, request, next_query_at)
       VALUES ('mpesa', $1, $1, $2, 5, '{}', now()) RETURNING id`,
      [kind, subject],
    );
    railRequests.push(request);
    railCallbacks.push(
      await one(
        `INSERT INTO rail_callbacks (rail, kind, rail_request_id, source_address, payload, effect)
         VALUES ('mpesa', 'result', $1, '127.0.0.1', '{}', 'APPLIED') RETURNING id`,
        [request],
      ),
    );
  }
  const job = (topic: string, payload: Record<string, string>, done = false) =>
    one(`INSERT INTO outbox (topic, payload, relayed_at, done_at) VALUES ($1, $2, $3, $3) RETURNING id`, [
      topic,
      payload,
      done ? new Date() : null,
    ]);
  // Every topic of every build, finished or not.
  const outbox = {
    'payments.settle': await job('payments.settle', { paymentId: payment }),
    'payments.expire-checkout': await job('payments.expire-checkout', { sessionId: session }),
    'reversals.process': await job('reversals.process', { reversalId: reversal }),
    'payments.reverse': await job('payments.reverse', { reversalId: reversal }, true),
    'payouts.process': await job('payouts.process', { payoutId: payout }),
    'payouts.recheck': await job('payouts.recheck', { payoutId: payout }, true),
    'airtime.process': await job('airtime.process', { requestId: airtimeRequest, first: '1', last: '1' }),
    'airtime.recheck': await job('airtime.recheck', { recipientId: recipient }),
    'notifications.send': await job('notifications.send', { notificationId: notification }),
    'callbacks.deliver': await job('callbacks.deliver', { deliveryId: delivery }, true),
  };
  return {
    clientId,
    outbox,
    rows: {
      postings,
      client_service_fee_tiers: [tier],
      airtime_recipients: [recipient],
      callback_attempts: [attempt],
      rail_requests: railRequests,
      rail_callbacks: railCallbacks,
      outbox: Object.values(outbox),
    },
  };
}

/**
 * Migration 039 on a database migrated to 038 with rows in every table it changes: each row gets its own client,
 * found through the record it points at; an operator callback that matched nothing moves to unmatched_rail_callbacks,
 * and outbox rows whose record is gone (or of a topic no build handles) go.
 */
describe('migration ClientIdColumns (039)', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let db: Client;

  beforeAll(async () => {
    scratch = await scratchDatabase('paygate_m039');
    const dataSource = new DataSource({
      type: 'postgres',
      url: scratch.url,
      migrations: migrationsBefore039(),
      migrationsTableName: 'schema_migrations',
    });
    await dataSource.initialize();
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await dataSource.destroy();
    }
    db = new Client({ connectionString: scratch.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await scratch?.drop();
  });

  it('gives every row the client of the record it points at', async () => {
    const a = await seedClient(db, 'CA');
    const b = await seedClient(db, 'CB');
    const unmatched = (
      await db.query(
        `INSERT INTO rail_callbacks (rail, kind, rail_request_id, source_address, payload, effect)
         VALUES ('mpesa', 'stk', NULL, '10.0.0.9', '{"spoof": true}', 'UNMATCHED') RETURNING id`,
      )
    ).rows[0].id;
    const orphans = (
      await db.query(
        `INSERT INTO outbox (topic, payload, relayed_at, done_at) VALUES
           ('payments.settle', '{"paymentId": "999999"}', now(), now()),
           ('payouts.process', '{"payoutId": "999999"}', NULL, NULL),
           ('ledger.rebuild', '{}', NULL, NULL)
         RETURNING id`,
      )
    ).rows.map((row) => String(row.id));

    await db.query('BEGIN');
    await new ClientIdColumns1763800000039().up({
      query: (sql: string, params?: unknown[]) => db.query(sql, params),
    } as unknown as QueryRunner);
    await db.query('COMMIT');

    for (const seeded of [a, b]) {
      for (const [table, ids] of Object.entries(seeded.rows)) {
        const { rows } = await db.query(`SELECT DISTINCT client_id FROM ${table} WHERE id::text = ANY ($1)`, [ids]);
        expect([table, rows.map((row) => row.client_id)]).toEqual([table, [seeded.clientId]]);
      }
      const partners = await db.query(
        `SELECT DISTINCT p.client_id FROM client_service_partners p JOIN client_services s ON s.id = p.client_service_id
         WHERE s.client_id = $1`,
        [seeded.clientId],
      );
      expect(partners.rows.map((row) => row.client_id)).toEqual([seeded.clientId]);
    }
    // Every topic's row kept, with its client.
    const { rows: kept } = await db.query(`SELECT topic FROM outbox WHERE id = ANY ($1) ORDER BY id`, [Object.values(a.outbox)]);
    expect(kept.map((row) => row.topic)).toEqual(Object.keys(a.outbox));

    // Not a row of any table is left without a client; the column is NOT NULL.
    const { rows: columns } = await db.query(
      `SELECT table_name, is_nullable, udt_name FROM information_schema.columns
       WHERE table_schema = 'public' AND column_name = 'client_id' AND table_name = ANY ($1) ORDER BY table_name`,
      [[...Object.keys(a.rows), 'client_service_partners']],
    );
    expect(columns.map((c) => [c.table_name, c.is_nullable, c.udt_name])).toEqual(
      [...Object.keys(a.rows), 'client_service_partners'].sort().map((table) => [table, 'NO', 'uuid']),
    );

    // The callback that matched no request moved to the coordinator's table, as it came.
    expect((await db.query(`SELECT 1 FROM rail_callbacks WHERE id = $1`, [unmatched])).rows).toEqual([]);
    const { rows: moved } = await db.query(`SELECT rail, kind, source_address, payload FROM unmatched_rail_callbacks`);
    expect(moved).toEqual([{ rail: 'mpesa', kind: 'stk', source_address: '10.0.0.9', payload: { spoof: true } }]);

    // Outbox rows whose record does not exist, or of a topic no build handles, are gone.
    expect((await db.query(`SELECT id FROM outbox WHERE id = ANY ($1)`, [orphans])).rows).toEqual([]);
  });
});
