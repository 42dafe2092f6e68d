import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The append-only history tables that grow without end become partitioned by month (UTC) on their own timestamp:
 * postings, wallet transaction records, callback attempts and operator callbacks. Each is rebuilt: a partitioned
 * table like the old one, a DEFAULT partition (an insert never fails for want of a month) and one partition per
 * month its rows already span, named `<table>_YYYY_MM` as `partitions:ensure` names the coming ones; the rows moved,
 * the grants, sequence, keys, indexes and foreign keys recreated under their old names. A partitioned table's
 * primary key must hold the partition key, so each becomes (id, <timestamp>); nothing references these tables.
 *
 * journal_entries and wallet_operations stay whole: eight business-record tables reference entries by id, and
 * wallet_operations holds the idempotency key of every wallet request (client_id, source_transaction_id), which a
 * partitioned table could only keep unique per month (docs/decisions.md, issue 21: partitioned history).
 *
 * `partitions:archive` detaches old months into schema `archive` (kept for export, out of the application's way);
 * what their postings added to each account is kept in ledger_archived_balances, so that a stored balance still
 * equals what its postings sum to (invariant (b)) and a statement still opens on the right balance.
 */
export class PartitionedHistory1763800000034 implements MigrationInterface {
  name = 'PartitionedHistory1763800000034';

  async up(q: QueryRunner): Promise<void> {
    for (const table of HISTORY) await rebuild(q, table, true);
    await q.query(`
      CREATE TABLE ledger_archived_balances (
        client_id uuid NOT NULL REFERENCES clients (id),
        account_id uuid NOT NULL REFERENCES ledger_accounts (id),
        -- The sum of the account's archived postings: its balance after the last of them.
        balance numeric(20, 4) NOT NULL,
        -- Every posting of the account booked before this instant is archived.
        archived_before timestamptz NOT NULL,
        PRIMARY KEY (client_id, account_id)
      );
      CREATE SCHEMA archive;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    // Refuses (the schema is not empty) while archived months remain: their balances would be lost with the table.
    await q.query(`DROP SCHEMA archive; DROP TABLE ledger_archived_balances;`);
    for (const table of HISTORY) await rebuild(q, table, false);
  }
}

interface HistoryTable {
  table: string;
  /** The partition key: the row's own timestamp, set once at insert. */
  column: string;
  /** The sequence of a bigserial id, handed over to the new table. */
  sequence: string | null;
  /** Keys, indexes and foreign keys, created after the rows are in; `primaryKey` is the key's column list. */
  keys(primaryKey: string): string;
}

const HISTORY: HistoryTable[] = [
  {
    table: 'postings',
    column: 'created_at',
    sequence: 'postings_id_seq',
    keys: (primaryKey) => `
      ALTER TABLE postings ADD CONSTRAINT postings_pkey PRIMARY KEY (${primaryKey}),
        ADD CONSTRAINT postings_account_id_fkey FOREIGN KEY (account_id) REFERENCES ledger_accounts (id),
        ADD CONSTRAINT postings_entry_id_fkey FOREIGN KEY (entry_id) REFERENCES journal_entries (id);
      CREATE INDEX postings_account_idx ON postings (account_id, id);
      CREATE INDEX postings_entry_idx ON postings (entry_id);`,
  },
  {
    table: 'wallet_transactions',
    column: 'created_at',
    sequence: null,
    keys: (primaryKey) => `
      ALTER TABLE wallet_transactions ADD CONSTRAINT wallet_transactions_pkey PRIMARY KEY (${primaryKey}),
        ADD CONSTRAINT wallet_transactions_account_id_fkey FOREIGN KEY (account_id) REFERENCES ledger_accounts (id),
        ADD CONSTRAINT wallet_transactions_client_id_fkey FOREIGN KEY (client_id) REFERENCES clients (id),
        ADD CONSTRAINT wallet_transactions_client_service_id_fkey FOREIGN KEY (client_service_id) REFERENCES client_services (id),
        ADD CONSTRAINT wallet_transactions_operation_id_fkey FOREIGN KEY (operation_id) REFERENCES wallet_operations (id);
      CREATE INDEX wallet_transactions_account_idx ON wallet_transactions (account_id, created_at, id);
      CREATE INDEX wallet_transactions_operation_idx ON wallet_transactions (operation_id);`,
  },
  {
    table: 'callback_attempts',
    column: 'attempted_at',
    sequence: 'callback_attempts_id_seq',
    keys: (primaryKey) => `
      ALTER TABLE callback_attempts ADD CONSTRAINT callback_attempts_pkey PRIMARY KEY (${primaryKey}),
        ADD CONSTRAINT callback_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES callback_deliveries (id);
      CREATE INDEX callback_attempts_delivery_idx ON callback_attempts (delivery_id, attempt);`,
  },
  {
    table: 'rail_callbacks',
    column: 'received_at',
    sequence: 'rail_callbacks_id_seq',
    keys: (primaryKey) => `
      ALTER TABLE rail_callbacks ADD CONSTRAINT rail_callbacks_pkey PRIMARY KEY (${primaryKey}),
        ADD CONSTRAINT rail_callbacks_rail_request_id_fkey FOREIGN KEY (rail_request_id) REFERENCES rail_requests (id);
      CREATE INDEX rail_callbacks_request_ix ON rail_callbacks (rail_request_id);`,
  },
];

/** Rebuilds a table, partitioned by month or (down) plain, with its rows, grants, sequence, keys and indexes. */
async function rebuild(q: QueryRunner, { table, column, sequence, keys }: HistoryTable, partitioned: boolean): Promise<void> {
  const old = `${table}_rebuilt`;
  await q.query(`ALTER TABLE ${table} RENAME TO ${old}`);
  await q.query(
    `CREATE TABLE ${table} (LIKE ${old} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS)` +
      (partitioned ? ` PARTITION BY RANGE (${column})` : ''),
  );
  if (partitioned) {
    await q.query(`CREATE TABLE ${table}_default PARTITION OF ${table} DEFAULT`);
    const months: Array<{ name: string; lower: string; upper: string }> = await q.query(
      `SELECT DISTINCT $1 || to_char(m, 'YYYY_MM') AS name, to_char(m, 'YYYY-MM-DD') AS lower,
              to_char(m + interval '1 month', 'YYYY-MM-DD') AS upper
         FROM (SELECT date_trunc('month', ${column} AT TIME ZONE 'UTC') AS m FROM ${old}) months`,
      [`${table}_`],
    );
    for (const month of months) {
      await q.query(
        `CREATE TABLE ${month.name} PARTITION OF ${table} FOR VALUES FROM ('${month.lower} 00:00+00') TO ('${month.upper} 00:00+00')`,
      );
    }
  }
  await q.query(`INSERT INTO ${table} SELECT * FROM ${old}`);
  const grants: Array<{ grantee: string; privileges: string }> = await q.query(
    `SELECT g.grantee, string_agg(g.privilege_type, ', ') AS privileges
       FROM information_schema.role_table_grants g JOIN pg_tables t ON t.schemaname = g.table_schema AND t.tablename = g.table_name
      WHERE g.table_schema = 'public' AND g.table_name = $1 AND g.grantee <> t.tableowner
      GROUP BY g.grantee`,
    [old],
  );
  for (const { grantee, privileges } of grants) {
    await q.query(`GRANT ${privileges} ON ${table} TO ${grantee === 'PUBLIC' ? 'PUBLIC' : `"${grantee.replace(/"/g, '""')}"`}`);
  }
  // Owned by the old table's id, the sequence would be dropped with it.
  if (sequence) await q.query(`ALTER SEQUENCE ${sequence} OWNED BY ${table}.id`);
  await q.query(`DROP TABLE ${old}`);
  await q.query(keys(partitioned ? `id, ${column}` : 'id'));
}
