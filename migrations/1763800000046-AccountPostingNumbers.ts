import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each posting gets its place among its account's postings, `account_seq` (1, 2, 3, … per account), taken by the
 * posting core under the account's row lock from the account's `posting_count` (issue 31; docs/scaling.md, "On a
 * real Citus cluster"). Statements ordered an account's postings by id, which follows the order of events only on
 * one node: on Citus a worker's copy of the ids' sequence counts from its group << 48, so a posting made by a
 * delegated call gets an id near 2^48 and one made on the coordinator a small one.
 *
 * Existing postings are numbered in id order per account (the order they were applied, on one node), and each
 * account's count is its number of postings. ledger_archived_balances gets the number of an account's archived
 * postings (`postings`, added to by partitions:archive from now on), so `ledger:verify` can count an account's
 * attached postings against its posting_count; months archived before this migration are not counted, and the
 * postings still attached are numbered from 1.
 *
 * The unique key (client_id, account_id, account_seq, created_at) replaces the index (account_id, id): a partitioned
 * table's unique key must hold its partition key, so the database refuses a number twice only among postings booked
 * at the same instant (one transaction's, where a numbering fault of the posting core would show); across
 * transactions `ledger:verify` checks it. The write path keeps one index on the account, as before.
 *
 * Cost on a large database: one transaction that takes ACCESS EXCLUSIVE on ledger_accounts, postings and
 * ledger_archived_balances and holds it to commit (run it in a quiet window); the numbering rewrites every posting
 * once, and the key is built over them.
 */
export class AccountPostingNumbers1763800000046 implements MigrationInterface {
  name = 'AccountPostingNumbers1763800000046';

  async up(q: QueryRunner): Promise<void> {
    // In the order a money transaction reaches them (the accounts, then the postings); each try waits at most 500 ms,
    // below deadlock_timeout, so should a cycle with a money transaction form, this side gives up first (as 039).
    await q.query(`
      DO $$
      BEGIN
        SET LOCAL lock_timeout = '500ms';
        FOR i IN 1 .. 20 LOOP
          BEGIN
            LOCK TABLE ledger_accounts, postings, ledger_archived_balances IN ACCESS EXCLUSIVE MODE;
            RETURN;
          EXCEPTION WHEN lock_not_available THEN
            PERFORM pg_sleep(0.5);
          END;
        END LOOP;
        RAISE EXCEPTION 'could not lock ledger_accounts and postings in 20 tries: run it when the money paths are quiet';
      END
      $$`);
    await q.query(`RESET lock_timeout`);
    await q.query(`
      ALTER TABLE ledger_accounts ADD COLUMN posting_count bigint NOT NULL DEFAULT 0;
      ALTER TABLE ledger_archived_balances ADD COLUMN postings bigint NOT NULL DEFAULT 0;
      ALTER TABLE postings ADD COLUMN account_seq bigint;

      UPDATE postings p SET account_seq = n.seq
        FROM (SELECT id, created_at, client_id, row_number() OVER (PARTITION BY client_id, account_id ORDER BY id) AS seq
                FROM postings) n
       WHERE p.id = n.id AND p.created_at = n.created_at AND p.client_id = n.client_id;
      ALTER TABLE postings ALTER COLUMN account_seq SET NOT NULL;
      UPDATE ledger_accounts a SET posting_count = n.count
        FROM (SELECT client_id, account_id, max(account_seq) AS count FROM postings GROUP BY client_id, account_id) n
       WHERE a.client_id = n.client_id AND a.id = n.account_id;

      ALTER TABLE postings ADD CONSTRAINT postings_account_seq_key UNIQUE (client_id, account_id, account_seq, created_at);
      DROP INDEX postings_account_idx;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX postings_account_idx ON postings (account_id, id);
      ALTER TABLE postings DROP CONSTRAINT postings_account_seq_key;
      ALTER TABLE postings DROP COLUMN account_seq;
      ALTER TABLE ledger_archived_balances DROP COLUMN postings;
      ALTER TABLE ledger_accounts DROP COLUMN posting_count;
    `);
  }
}
