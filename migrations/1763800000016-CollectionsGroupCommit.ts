import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Charge acceptance and checkout initiation by group commit (issue 10 item 2): the requests one API process has in
 * hand at once go to the database as one call of the batch form, one transaction and one commit, and each is
 * handled by its one-call function (migration 011) exactly as it would be alone.
 *
 * Items are taken in (client, reference) order, whatever order they came in: a batch waits on another's uncommitted
 * reference only in that order, so two batches holding the same references cannot wait on each other. A copy of a
 * request later in the same batch meets the first's uncommitted row (same transaction) and is answered as its replay,
 * or 409 for another body, as it would be arriving just after it; copies are taken in arrival order.
 *
 * Each item is the one-call function's argument list as a JSON array; the answer is one row per item with its
 * 1-based position in the call (item_no).
 */
export class CollectionsGroupCommit1763800000016 implements MigrationInterface {
  name = 'CollectionsGroupCommit1763800000016';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION collection_accept_charges(p_items jsonb)
      RETURNS TABLE (item_no int, outcome text, problem text, details text[], id bigint, service_amount numeric,
                     transaction_charge numeric, total_amount numeric, payment_url text, next_step text)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        a jsonb; n bigint;
      BEGIN
        FOR a, n IN
          SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n)
          ORDER BY e.a->>0, e.a->4->>'external_reference', e.n
        LOOP
          RETURN QUERY SELECT n::int, r.* FROM collection_accept_charge(
            (a->>0)::uuid, a->>1, a->>2, a->>3, a->4, nullif(a->5, 'null'), a->>6, a->>7, (a->>8)::timestamptz) r;
        END LOOP;
      END
      $fn$;

      CREATE FUNCTION collection_initiate_checkouts(p_items jsonb)
      RETURNS TABLE (item_no int, outcome text, problem text, details text[], merchant_transaction_id text,
                     checkout_reference text, currency text, amount numeric, expires_at timestamptz)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        a jsonb; n bigint;
      BEGIN
        FOR a, n IN
          SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n)
          ORDER BY e.a->>0, e.a->4->>'merchant_transaction_id', e.n
        LOOP
          RETURN QUERY SELECT n::int, r.* FROM collection_initiate_checkout(
            (a->>0)::uuid, a->>1, a->>2, a->>3, a->4, nullif(a->5, 'null'), a->>6) r;
        END LOOP;
      END
      $fn$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION collection_initiate_checkouts(jsonb); DROP FUNCTION collection_accept_charges(jsonb);`);
  }
}
