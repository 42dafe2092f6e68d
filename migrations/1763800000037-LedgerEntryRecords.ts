import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The posting core's input as named records instead of five parallel arrays: an entry to post is its client, its
 * kind and its lines, each line an account and a signed amount. ledger_post_entries (a function source) takes an
 * array of them.
 */
export class LedgerEntryRecords1763800000037 implements MigrationInterface {
  name = 'LedgerEntryRecords1763800000037';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TYPE ledger_line AS (account_id uuid, amount numeric)`);
    await q.query(`CREATE TYPE ledger_entry_to_post AS (client_id uuid, kind text, lines ledger_line[])`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Functions taking these types are function sources: dropping the types drops them, and the sources of the
    // version rolled back to define them again.
    await q.query(`DROP TYPE ledger_entry_to_post CASCADE`);
    await q.query(`DROP TYPE ledger_line CASCADE`);
  }
}
