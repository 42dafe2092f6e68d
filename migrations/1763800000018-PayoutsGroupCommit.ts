import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Payout acceptance (local, IMT, B2B) by group commit: the payouts one API process has in hand at once are one call
 * of payout_accept_batch, one transaction, each accepted by payout_accept (migration OneCallPayoutsReversals) as it
 * would be alone. A merchant's payouts all draw on its float, so alone each took the float's row lock, and waited
 * for it, on its own; in a group the float is locked once.
 *
 * Every float and rail in-flight account the group can post to is locked first, in one statement, in id order, as
 * the ledger always locks: a group then waits for another only before it holds anything, so groups, and single
 * entries on the same accounts, cannot deadlock. Items then run in (client, reference) order, so groups waiting on
 * each other's uncommitted references wait in one direction. Each item is payout_accept's argument list as a JSON
 * array; the answer is one row per item with its 1-based position (item_no).
 */
export class PayoutsGroupCommit1763800000018 implements MigrationInterface {
  name = 'PayoutsGroupCommit1763800000018';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION payout_accept_batch(p_items jsonb)
      RETURNS TABLE (item_no int, outcome text, fee numeric, float_currency text, minimum_amount numeric, maximum_amount numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_accounts uuid[];
        a jsonb; n bigint;
      BEGIN
        -- The floats of the named services and the in-flight accounts of their rails and currencies. One not created
        -- yet is created by the first reservation that needs it (so a refused payout leaves no account behind).
        SELECT array_agg(x.id) INTO v_accounts FROM (
          SELECT s.settlement_account_id AS id
          FROM jsonb_array_elements(p_items) e(a) JOIN client_services s ON s.client_id = (e.a->>0)::uuid AND s.code = e.a->>1
          WHERE s.settlement_account_id IS NOT NULL
          UNION
          SELECT i.id
          FROM jsonb_array_elements(p_items) e(a)
          JOIN ledger_accounts i ON i.client_id = (e.a->>0)::uuid AND i.kind = e.a->>13 AND i.currency = e.a->>5 AND i.kind <> 'WALLET'
        ) x;
        PERFORM 1 FROM ledger_accounts la WHERE la.id = ANY (v_accounts) ORDER BY la.id FOR NO KEY UPDATE;

        FOR a, n IN
          SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n) ORDER BY e.a->>0, e.a->>3, e.n
        LOOP
          RETURN QUERY SELECT n::int, r.* FROM payout_accept(
            (a->>0)::uuid, a->>1, a->>2, a->>3, (a->>4)::numeric, a->>5, a->>6, a->>7, a->>8, a->>9, a->>10, a->11, a->>12,
            a->>13, a->>14, (a->>15)::timestamptz, ARRAY(SELECT jsonb_array_elements_text(a->16))) r;
        END LOOP;
      END
      $fn$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION payout_accept_batch(jsonb);`);
  }
}
