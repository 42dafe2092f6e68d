import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The view of business records that own a ledger entry names each record's client, so invariant (d) of
 * `ledger:verify` joins it to journal_entries on client_id and entry, the join Citus runs between co-located shards
 * (issue 31 item 6). The new column goes last, as CREATE OR REPLACE VIEW requires.
 */
const records = (withClient: boolean) => {
  const client = withClient ? ', client_id' : '';
  return `CREATE OR REPLACE VIEW ledger_business_records AS
  SELECT 'wallet_operation'::text AS record_type, id::text AS record_id, entry_id${client} FROM wallet_operations
  UNION ALL
  SELECT 'payment', id::text, entry_id${client} FROM payments WHERE entry_id IS NOT NULL
  UNION ALL
  SELECT 'payment_split', id::text, split_entry_id${client} FROM payments WHERE split_entry_id IS NOT NULL
  UNION ALL
  SELECT 'collection_reversal', id::text, entry_id${client} FROM collection_reversals WHERE entry_id IS NOT NULL
  UNION ALL
  SELECT 'collection_reversal_compensation', id::text, compensation_entry_id${client} FROM collection_reversals
  WHERE compensation_entry_id IS NOT NULL
  UNION ALL
  SELECT 'float_reservation', id::text, reserve_entry_id${client} FROM float_reservations
  UNION ALL
  SELECT 'float_hold', id::text, outcome_entry_id${client} FROM float_holds WHERE outcome_entry_id IS NOT NULL`;
};

export class BusinessRecordsByClient1763800000041 implements MigrationInterface {
  name = 'BusinessRecordsByClient1763800000041';

  async up(q: QueryRunner): Promise<void> {
    await q.query(records(true));
  }

  async down(q: QueryRunner): Promise<void> {
    // A view cannot drop a column in place: made again as it was.
    await q.query(`DROP VIEW ledger_business_records`);
    await q.query(records(false));
  }
}
