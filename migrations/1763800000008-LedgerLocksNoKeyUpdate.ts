import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * ledger_post_entry locks the accounts of an entry FOR NO KEY UPDATE instead of FOR UPDATE. A balance update never
 * changes an account's key, and the stronger lock conflicts with the KEY SHARE lock that every foreign key to
 * ledger_accounts takes: two transactions that each inserted a row referencing a float (a payout, an airtime
 * request) and then posted on it deadlocked. With NO KEY UPDATE, entries on the same account still queue behind one
 * another (the lock conflicts with itself), and rows referencing the account no longer wait for them.
 */
export class LedgerLocksNoKeyUpdate1763800000008 implements MigrationInterface {
  name = 'LedgerLocksNoKeyUpdate1763800000008';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION ledger_post_entry(p_client_id uuid, p_kind text, p_accounts uuid[], p_amounts numeric[])
      RETURNS TABLE (entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_entry_id  bigint;
        v_found     int;
        v_bad       text;
      BEGIN
        IF cardinality(p_accounts) < 2 OR cardinality(p_accounts) <> cardinality(p_amounts)
           OR cardinality(p_accounts) <> (SELECT count(DISTINCT a) FROM unnest(p_accounts) a) THEN
          RAISE EXCEPTION 'entry needs one line on each of at least two accounts' USING ERRCODE = 'LB001';
        END IF;

        SELECT count(*) INTO v_found FROM (
          SELECT 1 FROM ledger_accounts a
          WHERE a.id = ANY (p_accounts) AND a.client_id = p_client_id
          ORDER BY a.id
          FOR NO KEY UPDATE
        ) locked;
        IF v_found <> cardinality(p_accounts) THEN
          RAISE EXCEPTION 'entry names an unknown account or one of another client' USING ERRCODE = 'LA001';
        END IF;

        SELECT a.currency INTO v_bad
        FROM unnest(p_accounts, p_amounts) AS l(id, amount)
        JOIN ledger_accounts a ON a.id = l.id
        GROUP BY a.currency
        HAVING sum(l.amount) <> 0 OR bool_or(l.amount <> round(l.amount, 4) OR l.amount = 0)
        LIMIT 1;
        IF v_bad IS NOT NULL THEN
          RAISE EXCEPTION 'entry does not balance in %', v_bad USING ERRCODE = 'LB001';
        END IF;

        INSERT INTO journal_entries (client_id, kind) VALUES (p_client_id, p_kind) RETURNING id INTO v_entry_id;

        RETURN QUERY
        WITH moved AS (
          UPDATE ledger_accounts a SET balance = a.balance + l.amount
          FROM unnest(p_accounts, p_amounts) AS l(id, amount)
          WHERE a.id = l.id
          RETURNING a.id, a.currency, l.amount, a.balance - l.amount AS before, a.balance AS after
        ), posted AS (
          INSERT INTO postings (entry_id, account_id, currency, amount, balance_after)
          SELECT v_entry_id, m.id, m.currency, m.amount, m.after FROM moved m
        )
        SELECT v_entry_id, m.id, m.amount, m.before, m.after FROM moved m;

        SELECT a.account_number INTO v_bad
        FROM unnest(p_accounts, p_amounts) AS l(id, amount)
        JOIN ledger_accounts a ON a.id = l.id
        WHERE l.amount < 0 AND NOT a.can_overdraw AND a.balance < a.minimum_balance
        LIMIT 1;
        IF v_bad IS NOT NULL THEN
          RAISE EXCEPTION 'account % would go below its minimum balance', v_bad USING ERRCODE = 'LF001', DETAIL = v_bad;
        END IF;
      END
      $fn$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION ledger_post_entry(p_client_id uuid, p_kind text, p_accounts uuid[], p_amounts numeric[])
      RETURNS TABLE (entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_entry_id  bigint;
        v_found     int;
        v_bad       text;
      BEGIN
        IF cardinality(p_accounts) < 2 OR cardinality(p_accounts) <> cardinality(p_amounts)
           OR cardinality(p_accounts) <> (SELECT count(DISTINCT a) FROM unnest(p_accounts) a) THEN
          RAISE EXCEPTION 'entry needs one line on each of at least two accounts' USING ERRCODE = 'LB001';
        END IF;

        SELECT count(*) INTO v_found FROM (
          SELECT 1 FROM ledger_accounts a
          WHERE a.id = ANY (p_accounts) AND a.client_id = p_client_id
          ORDER BY a.id
          FOR UPDATE
        ) locked;
        IF v_found <> cardinality(p_accounts) THEN
          RAISE EXCEPTION 'entry names an unknown account or one of another client' USING ERRCODE = 'LA001';
        END IF;

        SELECT a.currency INTO v_bad
        FROM unnest(p_accounts, p_amounts) AS l(id, amount)
        JOIN ledger_accounts a ON a.id = l.id
        GROUP BY a.currency
        HAVING sum(l.amount) <> 0 OR bool_or(l.amount <> round(l.amount, 4) OR l.amount = 0)
        LIMIT 1;
        IF v_bad IS NOT NULL THEN
          RAISE EXCEPTION 'entry does not balance in %', v_bad USING ERRCODE = 'LB001';
        END IF;

        INSERT INTO journal_entries (client_id, kind) VALUES (p_client_id, p_kind) RETURNING id INTO v_entry_id;

        RETURN QUERY
        WITH moved AS (
          UPDATE ledger_accounts a SET balance = a.balance + l.amount
          FROM unnest(p_accounts, p_amounts) AS l(id, amount)
          WHERE a.id = l.id
          RETURNING a.id, a.currency, l.amount, a.balance - l.amount AS before, a.balance AS after
        ), posted AS (
          INSERT INTO postings (entry_id, account_id, currency, amount, balance_after)
          SELECT v_entry_id, m.id, m.currency, m.amount, m.after FROM moved m
        )
        SELECT v_entry_id, m.id, m.amount, m.before, m.after FROM moved m;

        SELECT a.account_number INTO v_bad
        FROM unnest(p_accounts, p_amounts) AS l(id, amount)
        JOIN ledger_accounts a ON a.id = l.id
        WHERE l.amount < 0 AND NOT a.can_overdraw AND a.balance < a.minimum_balance
        LIMIT 1;
        IF v_bad IS NOT NULL THEN
          RAISE EXCEPTION 'account % would go below its minimum balance', v_bad USING ERRCODE = 'LF001', DETAIL = v_bad;
        END IF;
      END
      $fn$;
    `);
  }
}
