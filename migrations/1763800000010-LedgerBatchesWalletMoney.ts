import { MigrationInterface, QueryRunner } from 'typeorm';
import { LedgerLocksNoKeyUpdate1763800000008 } from './1763800000008-LedgerLocksNoKeyUpdate';

/**
 * Money requests in one database call each, and many of them in one transaction (issue 10).
 *
 * ledger_post_entries is the ledger's batch form: it locks every account of a batch once, in id order, applies the
 * entries in the order given against running balances, refuses only the entries that would take a wallet below its
 * floor, and writes all journal entries and postings set-based, updating each account row once with its final
 * balance. ledger_post_entry (one entry) becomes a call of it, so there is one ledger core.
 *
 * wallet_money_batch is the whole of a batch of wallet credits, debits and transfers: idempotency, wallet and service
 * lookups, the rules of provider contract §4, fees, the postings (through ledger_post_entries) and the operation and
 * transaction records. Each request gets its own outcome; a refusal never fails its neighbours.
 */
export class LedgerBatchesWalletMoney1763800000010 implements MigrationInterface {
  name = 'LedgerBatchesWalletMoney1763800000010';

  async up(q: QueryRunner): Promise<void> {
    // Lines come grouped by entry, in entry order (p_line_entry is 1-based and non-decreasing). Output: one row per
    // line of each posted entry, and one row (entry_id NULL, refused_account set) per refused entry.
    await q.query(`
      CREATE FUNCTION ledger_post_entries(p_clients uuid[], p_kinds text[], p_line_entry int[], p_line_account uuid[], p_line_amount numeric[])
      RETURNS TABLE (entry_no int, entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric,
                     refused_account text)
      LANGUAGE plpgsql AS $fn$
      #variable_conflict use_column
      DECLARE
        v_ids uuid[]; v_owners uuid[]; v_numbers text[]; v_currencies text[]; v_balances numeric[]; v_start numeric[];
        v_floors numeric[]; v_overdraw boolean[];
        v_pos int[] := '{}';
        v_lines int := cardinality(p_line_entry);
        v_entries int := cardinality(p_clients);
        v_e_ids bigint[] := '{}'; v_e_clients uuid[] := '{}'; v_e_kinds text[] := '{}';
        v_p_entry bigint[] := '{}'; v_p_account uuid[] := '{}'; v_p_currency text[] := '{}'; v_p_amount numeric[] := '{}';
        v_p_after numeric[] := '{}';
        o_no int[] := '{}'; o_entry bigint[] := '{}'; o_account uuid[] := '{}'; o_amount numeric[] := '{}';
        o_before numeric[] := '{}'; o_after numeric[] := '{}'; o_refused text[] := '{}';
        e int; l int := 1; k int; v_first int; p int; v_refused text; v_entry bigint;
      BEGIN
        IF v_entries = 0 THEN RETURN; END IF;
        IF v_lines <> cardinality(p_line_account) OR v_lines <> cardinality(p_line_amount) OR cardinality(p_kinds) <> v_entries
           OR EXISTS (SELECT 1 FROM unnest(p_line_entry, p_line_account, p_line_amount) x(e, a, amt) GROUP BY x.e
                      HAVING count(*) < 2 OR count(DISTINCT x.a) <> count(*) OR bool_or(x.amt = 0 OR x.amt <> round(x.amt, 4)))
           OR (SELECT count(DISTINCT x) FROM unnest(p_line_entry) x) <> v_entries THEN
          RAISE EXCEPTION 'every entry needs one line on each of at least two accounts' USING ERRCODE = 'LB001';
        END IF;

        -- One lock per account for the whole batch, always in id order: batches and single entries cannot deadlock.
        SELECT array_agg(a.id ORDER BY a.id), array_agg(a.client_id ORDER BY a.id), array_agg(a.account_number::text ORDER BY a.id),
               array_agg(a.currency::text ORDER BY a.id), array_agg(a.balance ORDER BY a.id), array_agg(a.minimum_balance ORDER BY a.id),
               array_agg(a.can_overdraw ORDER BY a.id)
          INTO v_ids, v_owners, v_numbers, v_currencies, v_balances, v_floors, v_overdraw
          FROM (SELECT * FROM ledger_accounts WHERE id = ANY (p_line_account) ORDER BY id FOR NO KEY UPDATE) a;
        v_start := v_balances;
        FOR k IN 1 .. v_lines LOOP
          p := array_position(v_ids, p_line_account[k]);
          IF p IS NULL OR v_owners[p] <> p_clients[p_line_entry[k]] THEN
            RAISE EXCEPTION 'entry names an unknown account or one of another client' USING ERRCODE = 'LA001';
          END IF;
          v_pos := v_pos || p;
        END LOOP;
        IF EXISTS (SELECT 1 FROM unnest(p_line_entry, v_pos, p_line_amount) x(e, p, amt)
                   GROUP BY x.e, v_currencies[x.p] HAVING sum(x.amt) <> 0) THEN
          RAISE EXCEPTION 'an entry does not balance per currency' USING ERRCODE = 'LB001';
        END IF;

        FOR e IN 1 .. v_entries LOOP
          v_first := l;
          WHILE l <= v_lines AND p_line_entry[l] = e LOOP l := l + 1; END LOOP;
          IF v_first = l THEN
            RAISE EXCEPTION 'lines must come grouped by entry, in entry order' USING ERRCODE = 'LB001';
          END IF;
          -- An account appears once per entry, so checking each debit line is checking the entry's end state.
          v_refused := NULL;
          FOR k IN v_first .. l - 1 LOOP
            p := v_pos[k];
            IF p_line_amount[k] < 0 AND NOT v_overdraw[p] AND v_balances[p] + p_line_amount[k] < v_floors[p] THEN
              v_refused := v_numbers[p];
              EXIT;
            END IF;
          END LOOP;
          IF v_refused IS NOT NULL THEN
            o_no := o_no || e; o_entry := o_entry || NULL::bigint; o_account := o_account || NULL::uuid;
            o_amount := o_amount || NULL::numeric; o_before := o_before || NULL::numeric; o_after := o_after || NULL::numeric;
            o_refused := o_refused || v_refused;
            CONTINUE;
          END IF;
          v_entry := nextval('journal_entries_id_seq');
          v_e_ids := v_e_ids || v_entry; v_e_clients := v_e_clients || p_clients[e]; v_e_kinds := v_e_kinds || p_kinds[e];
          FOR k IN v_first .. l - 1 LOOP
            p := v_pos[k];
            o_before := o_before || v_balances[p];
            v_balances[p] := v_balances[p] + p_line_amount[k];
            v_p_entry := v_p_entry || v_entry; v_p_account := v_p_account || v_ids[p]; v_p_currency := v_p_currency || v_currencies[p];
            v_p_amount := v_p_amount || p_line_amount[k]; v_p_after := v_p_after || v_balances[p];
            o_no := o_no || e; o_entry := o_entry || v_entry; o_account := o_account || v_ids[p]; o_amount := o_amount || p_line_amount[k];
            o_after := o_after || v_balances[p]; o_refused := o_refused || NULL::text;
          END LOOP;
        END LOOP;

        INSERT INTO journal_entries (id, client_id, kind) SELECT * FROM unnest(v_e_ids, v_e_clients, v_e_kinds);
        INSERT INTO postings (entry_id, account_id, currency, amount, balance_after)
          SELECT x.e, x.a, x.c, x.amt, x.after FROM unnest(v_p_entry, v_p_account, v_p_currency, v_p_amount, v_p_after)
            WITH ORDINALITY x(e, a, c, amt, after, n) ORDER BY x.n;
        -- Each account's row once per batch, however many entries moved it.
        UPDATE ledger_accounts a SET balance = x.bal FROM unnest(v_ids, v_balances, v_start) x(id, bal, start)
          WHERE a.id = x.id AND x.bal <> x.start;

        RETURN QUERY SELECT * FROM unnest(o_no, o_entry, o_account, o_amount, o_before, o_after, o_refused);
      END
      $fn$;

      CREATE OR REPLACE FUNCTION ledger_post_entry(p_client_id uuid, p_kind text, p_accounts uuid[], p_amounts numeric[])
      RETURNS TABLE (entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        r record;
      BEGIN
        IF cardinality(p_accounts) <> cardinality(p_amounts) THEN
          RAISE EXCEPTION 'entry needs one line on each of at least two accounts' USING ERRCODE = 'LB001';
        END IF;
        FOR r IN SELECT * FROM ledger_post_entries(ARRAY[p_client_id], ARRAY[p_kind], array_fill(1, ARRAY[cardinality(p_accounts)]),
                                                   p_accounts, p_amounts) LOOP
          IF r.refused_account IS NOT NULL THEN
            RAISE EXCEPTION 'account % would go below its minimum balance', r.refused_account
              USING ERRCODE = 'LF001', DETAIL = r.refused_account;
          END IF;
          entry_id := r.entry_id; account_id := r.account_id; amount := r.amount;
          balance_before := r.balance_before; balance_after := r.balance_after;
          RETURN NEXT;
        END LOOP;
      END
      $fn$;
    `);

    // The fee a client service charges on an amount: src/client-services/fees.ts feeFor, for the calls that price
    // in the database (a test holds the two to the same answers).
    await q.query(`
      CREATE FUNCTION client_service_fee(p_service_id uuid, p_amount numeric) RETURNS numeric
      LANGUAGE sql STABLE AS $fn$
        SELECT CASE
          WHEN NOT s.has_transaction_fee THEN 0
          WHEN EXISTS (SELECT 1 FROM client_service_fee_tiers t WHERE t.client_service_id = s.id) THEN coalesce((
            SELECT CASE t.fee_type WHEN 'FIXED' THEN round(t.fee, 4) ELSE round(p_amount * t.fee / 100, 4) END
            FROM client_service_fee_tiers t
            WHERE t.client_service_id = s.id AND p_amount BETWEEN t.minimum_amount AND t.maximum_amount
            ORDER BY t.minimum_amount LIMIT 1), 0)
          WHEN s.transaction_fee_type = 'FIXED' THEN round(s.transaction_fee, 4)
          WHEN s.transaction_fee_type = 'PERCENTAGE' THEN round(p_amount * s.transaction_fee / 100, 4)
          ELSE 0 END
        FROM client_services s WHERE s.id = p_service_id
      $fn$;
    `);

    await q.query(WALLET_MONEY_BATCH);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION wallet_money_batch; DROP FUNCTION client_service_fee; DROP FUNCTION ledger_post_entry;`);
    await new LedgerLocksNoKeyUpdate1763800000008().up(q);
    await q.query(`DROP FUNCTION ledger_post_entries;`);
  }
}

/**
 * One row per request (item_no is its 1-based position). `outcome`: OK and REPLAY carry the records (jsonb array in
 * the shape of TransactionRow, numbers as text, debit leg first); the refusals carry what their message needs in
 * `detail` (a jsonb array of strings): CONFLICT, SAME_WALLET, WALLET_NOT_FOUND [number], PROFILE_DEACTIVATED
 * [number, role], WALLET_STATE [number, status, role], CURRENCY_MISMATCH, SERVICE_NOT_FOUND, SERVICE_INACTIVE [code],
 * AMOUNT_BOUNDS [min, max, currency], FEE_TOO_HIGH [fee], INSUFFICIENT [number]. CONVERT: the request's currency is
 * not its wallet's, and the application's conversion path handles it. The caller sends each (client, reference) at
 * most once per batch. Which wallet states may pay and receive come in as parameters: the application's state
 * machine owns that rule.
 */
const WALLET_MONEY_BATCH = `
  CREATE FUNCTION wallet_money_batch(
    p_clients uuid[], p_kinds text[], p_refs text[], p_fingerprints text[], p_sources text[], p_destinations text[],
    p_amounts numeric[], p_currencies text[], p_services text[], p_narrations text[], p_data jsonb[], p_dates timestamptz[],
    p_paying_states text[], p_receiving_states text[])
  RETURNS TABLE (item_no int, outcome text, detail jsonb, records jsonb)
  LANGUAGE plpgsql AS $fn$
  #variable_conflict use_column
  DECLARE
    v_key bigint;
    v_outcome text[] := '{}'; v_detail jsonb[] := '{}'; v_op uuid[] := '{}'; v_src uuid[] := '{}'; v_dst uuid[] := '{}';
    v_src_no text[] := '{}'; v_dst_no text[] := '{}'; v_currency text[] := '{}'; v_service uuid[] := '{}'; v_fee numeric[] := '{}';
    v_sys_key text[] := '{}'; v_sys_id uuid[] := '{}'; v_sys_no text[] := '{}';
    v_settlement uuid[] := '{}'; v_settlement_no text[] := '{}';
    v_e_item int[] := '{}'; v_e_clients uuid[] := '{}'; v_e_kinds text[] := '{}';
    v_l_entry int[] := '{}'; v_l_account uuid[] := '{}'; v_l_amount numeric[] := '{}';
    v_entry bigint[] := '{}'; v_new_op uuid[] := '{}'; v_leg1 uuid[] := '{}'; v_leg2 uuid[] := '{}';
    v_src_before numeric[] := '{}'; v_src_after numeric[] := '{}'; v_dst_before numeric[] := '{}'; v_dst_after numeric[] := '{}';
    v_fee_income uuid; v_amount numeric; i int; r record;
  BEGIN
    -- New references in concurrent batches queue here, each then seeing whether the other committed. A reference
    -- already recorded is a replay or a conflict whatever happens next, so replays take no lock.
    FOR v_key IN
      SELECT DISTINCT hashtextextended(x.c::text || ':' || x.ref, 0) AS k FROM unnest(p_clients, p_refs) x(c, ref)
      WHERE NOT EXISTS (SELECT 1 FROM wallet_operations o WHERE o.client_id = x.c AND o.source_transaction_id = x.ref)
      ORDER BY k
    LOOP
      PERFORM pg_advisory_xact_lock(v_key);
    END LOOP;

    -- Every check that does not depend on balances, per request, in the order the application reports them. Wallet
    -- and profile rows are share-locked, so a state change or a deactivation waits for the batch to commit.
    FOR r IN
      SELECT q.n, q.op, q.src, q.dst, q.currency, q.service, q.fee,
        CASE
          WHEN q.op IS NOT NULL THEN ARRAY[CASE WHEN q.op_kind = q.kind AND q.op_fp IS NOT DISTINCT FROM q.fp THEN 'REPLAY' ELSE 'CONFLICT' END]
          WHEN q.kind = 'TRANSFER' AND q.src_no = q.dst_no THEN ARRAY['SAME_WALLET']
          WHEN q.src IS NULL THEN ARRAY['WALLET_NOT_FOUND', q.src_no]
          WHEN q.kind = 'TRANSFER' AND q.dst IS NULL THEN ARRAY['WALLET_NOT_FOUND', q.dst_no]
          WHEN NOT q.src_profile_active THEN ARRAY['PROFILE_DEACTIVATED', q.src_no, q.src_role]
          WHEN NOT (q.src_status = ANY (CASE q.src_role WHEN 'RECEIVE' THEN p_receiving_states ELSE p_paying_states END))
            THEN ARRAY['WALLET_STATE', q.src_no, q.src_status, q.src_role]
          WHEN q.kind = 'TRANSFER' AND NOT q.dst_profile_active THEN ARRAY['PROFILE_DEACTIVATED', q.dst_no, 'RECEIVE']
          WHEN q.kind = 'TRANSFER' AND NOT (q.dst_status = ANY (p_receiving_states)) THEN ARRAY['WALLET_STATE', q.dst_no, q.dst_status, 'RECEIVE']
          WHEN q.kind = 'TRANSFER' AND q.currency <> q.dst_currency THEN ARRAY['CURRENCY_MISMATCH']
          WHEN q.service IS NULL THEN ARRAY['SERVICE_NOT_FOUND']
          WHEN NOT q.service_active THEN ARRAY['SERVICE_INACTIVE', q.service_code]
          WHEN q.req_currency <> q.currency THEN ARRAY['CONVERT']
          WHEN q.amount < q.min_amount OR q.amount > q.max_amount THEN ARRAY['AMOUNT_BOUNDS', q.min_amount::text, q.max_amount::text, q.currency]
          WHEN q.kind = 'CREDIT' AND q.fee >= q.amount THEN ARRAY['FEE_TOO_HIGH', q.fee::text]
          ELSE ARRAY['OK']
        END AS verdict
      FROM (
        SELECT x.n::int AS n, x.kind, x.fp, x.src_no, x.dst_no, x.amount, x.req_currency,
               CASE x.kind WHEN 'CREDIT' THEN 'RECEIVE' ELSE 'PAY' END AS src_role,
               o.id AS op, o.kind::text AS op_kind, o.request_fingerprint AS op_fp,
               s.id AS src, s.currency, s.status AS src_status, s.profile_active AS src_profile_active,
               d.id AS dst, d.currency AS dst_currency, d.status AS dst_status, d.profile_active AS dst_profile_active,
               cs.id AS service, cs.code::text AS service_code, cs.is_active = 1 AS service_active,
               cs.minimum_transaction_amount AS min_amount, cs.maximum_transaction_amount AS max_amount,
               CASE WHEN cs.id IS NOT NULL THEN client_service_fee(cs.id, x.amount) END AS fee
        FROM unnest(p_clients, p_kinds, p_refs, p_fingerprints, p_sources, p_destinations, p_amounts, p_currencies, p_services)
             WITH ORDINALITY x(client_id, kind, ref, fp, src_no, dst_no, amount, req_currency, service_code, n)
        LEFT JOIN wallet_operations o ON o.client_id = x.client_id AND o.source_transaction_id = x.ref
        LEFT JOIN LATERAL (
          SELECT a.id, a.currency::text AS currency, w.status::text AS status, p.is_active = 1 AS profile_active
          FROM ledger_accounts a JOIN wallets w ON w.id = a.id JOIN profiles p ON p.id = w.profile_id
          WHERE a.client_id = x.client_id AND a.account_number = x.src_no FOR SHARE OF w, p) s ON true
        LEFT JOIN LATERAL (
          SELECT a.id, a.currency::text AS currency, w.status::text AS status, p.is_active = 1 AS profile_active
          FROM ledger_accounts a JOIN wallets w ON w.id = a.id JOIN profiles p ON p.id = w.profile_id
          WHERE x.kind = 'TRANSFER' AND a.client_id = x.client_id AND a.account_number = x.dst_no FOR SHARE OF w, p) d ON true
        LEFT JOIN client_services cs ON cs.client_id = x.client_id AND cs.code = x.service_code
      ) q
      ORDER BY q.n
    LOOP
      v_outcome[r.n] := r.verdict[1];
      v_detail[r.n] := to_jsonb(r.verdict[2:]);
      v_op[r.n] := r.op; v_src[r.n] := r.src; v_dst[r.n] := r.dst; v_currency[r.n] := r.currency;
      v_service[r.n] := r.service; v_fee[r.n] := r.fee;
    END LOOP;

    -- The system accounts the accepted requests post to, created on first use.
    INSERT INTO ledger_accounts (client_id, kind, currency, can_overdraw)
      SELECT DISTINCT p_clients[i], k.kind, v_currency[i], true
      FROM generate_subscripts(p_clients, 1) i
      CROSS JOIN (VALUES ('SETTLEMENT'), ('FEE_INCOME')) k(kind)
      WHERE v_outcome[i] = 'OK' AND ((k.kind = 'SETTLEMENT' AND p_kinds[i] <> 'TRANSFER') OR (k.kind = 'FEE_INCOME' AND v_fee[i] > 0))
        AND NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.client_id = p_clients[i] AND a.kind = k.kind AND a.currency = v_currency[i])
      ON CONFLICT (client_id, kind, currency) WHERE kind <> 'WALLET' DO NOTHING;
    SELECT coalesce(array_agg(a.client_id::text || a.kind || a.currency), '{}'), coalesce(array_agg(a.id), '{}'),
           coalesce(array_agg(a.account_number::text), '{}')
      INTO v_sys_key, v_sys_id, v_sys_no
      FROM ledger_accounts a
      WHERE a.kind IN ('SETTLEMENT', 'FEE_INCOME')
        AND (a.client_id, a.currency) IN (SELECT p_clients[i], v_currency[i] FROM generate_subscripts(p_clients, 1) i WHERE v_outcome[i] = 'OK');

    -- One entry per accepted request, lines in the order the application's EntryBuilder would give them.
    FOR i IN 1 .. coalesce(cardinality(p_clients), 0) LOOP
      CONTINUE WHEN v_outcome[i] <> 'OK';
      v_e_item := v_e_item || i; v_e_clients := v_e_clients || p_clients[i]; v_e_kinds := v_e_kinds || ('WALLET_' || p_kinds[i]);
      v_amount := p_amounts[i];
      IF p_kinds[i] <> 'TRANSFER' THEN
        v_settlement[i] := v_sys_id[array_position(v_sys_key, p_clients[i]::text || 'SETTLEMENT' || v_currency[i])];
        v_settlement_no[i] := v_sys_no[array_position(v_sys_key, p_clients[i]::text || 'SETTLEMENT' || v_currency[i])];
      END IF;
      v_l_entry := v_l_entry || array_fill(cardinality(v_e_item), ARRAY[CASE WHEN v_fee[i] > 0 THEN 3 ELSE 2 END]);
      IF p_kinds[i] = 'CREDIT' THEN
        v_l_account := v_l_account || ARRAY[v_settlement[i], v_src[i]]; v_l_amount := v_l_amount || ARRAY[-v_amount, v_amount - v_fee[i]];
      ELSIF p_kinds[i] = 'DEBIT' THEN
        v_l_account := v_l_account || ARRAY[v_src[i], v_settlement[i]]; v_l_amount := v_l_amount || ARRAY[-(v_amount + v_fee[i]), v_amount];
      ELSE
        v_l_account := v_l_account || ARRAY[v_src[i], v_dst[i]]; v_l_amount := v_l_amount || ARRAY[-(v_amount + v_fee[i]), v_amount];
      END IF;
      IF v_fee[i] > 0 THEN
        v_fee_income := v_sys_id[array_position(v_sys_key, p_clients[i]::text || 'FEE_INCOME' || v_currency[i])];
        v_l_account := v_l_account || v_fee_income; v_l_amount := v_l_amount || v_fee[i];
      END IF;
    END LOOP;

    FOR r IN SELECT * FROM ledger_post_entries(v_e_clients, v_e_kinds, v_l_entry, v_l_account, v_l_amount) LOOP
      i := v_e_item[r.entry_no];
      IF r.refused_account IS NOT NULL THEN
        v_outcome[i] := 'INSUFFICIENT'; v_detail[i] := jsonb_build_array(r.refused_account);
      ELSE
        v_entry[i] := r.entry_id;
        IF r.account_id = v_src[i] THEN v_src_before[i] := r.balance_before; v_src_after[i] := r.balance_after; END IF;
        IF r.account_id = v_dst[i] THEN v_dst_before[i] := r.balance_before; v_dst_after[i] := r.balance_after; END IF;
      END IF;
    END LOOP;

    FOR i IN 1 .. coalesce(cardinality(p_clients), 0) LOOP
      CONTINUE WHEN v_outcome[i] <> 'OK';
      v_new_op[i] := gen_random_uuid(); v_leg1[i] := gen_random_uuid();
      IF p_kinds[i] = 'TRANSFER' THEN v_leg2[i] := gen_random_uuid(); END IF;
    END LOOP;

    -- No ON CONFLICT: the advisory locks make a duplicate impossible here unless another path wrote the reference
    -- meanwhile, and then the batch fails as a whole and the application retries its requests one by one.
    INSERT INTO wallet_operations (id, client_id, kind, source_transaction_id, request_fingerprint, entry_id)
      SELECT v_new_op[i], p_clients[i], p_kinds[i], p_refs[i], p_fingerprints[i], v_entry[i]
      FROM generate_subscripts(p_clients, 1) i WHERE v_outcome[i] = 'OK' ORDER BY i;
    INSERT INTO wallet_transactions (id, operation_id, client_id, account_id, client_service_id, transaction_type, transaction_source,
        currency, transaction_amount, transaction_fee, previous_balance, current_balance, other_party_account,
        other_party_transaction_hash, source_transaction_id, source_transaction_data, transaction_narration, transaction_date)
      SELECT l.id, v_new_op[l.i], p_clients[l.i], l.account, v_service[l.i], l.type, l.source, v_currency[l.i], p_amounts[l.i],
             l.fee, l.before, l.after, l.other_party, l.other_leg, p_refs[l.i], p_data[l.i], p_narrations[l.i], p_dates[l.i]
      FROM (
        SELECT i, 1 AS leg, v_leg1[i] AS id, v_src[i] AS account,
               CASE p_kinds[i] WHEN 'CREDIT' THEN 'CREDIT' ELSE 'DEBIT' END AS type,
               CASE p_kinds[i] WHEN 'CREDIT' THEN 'EXTERNAL_CREDIT' WHEN 'DEBIT' THEN 'EXTERNAL_DEBIT' ELSE 'INTERNAL_TRANSFER_DEBIT' END AS source,
               v_fee[i] AS fee, v_src_before[i] AS before, v_src_after[i] AS after,
               CASE WHEN p_kinds[i] = 'TRANSFER' THEN p_destinations[i] ELSE v_settlement_no[i] END AS other_party,
               v_leg2[i]::text AS other_leg
        FROM generate_subscripts(p_clients, 1) i WHERE v_outcome[i] = 'OK'
        UNION ALL
        SELECT i, 2, v_leg2[i], v_dst[i], 'CREDIT', 'INTERNAL_TRANSFER_CREDIT', 0, v_dst_before[i], v_dst_after[i], p_sources[i], v_leg1[i]::text
        FROM generate_subscripts(p_clients, 1) i WHERE v_outcome[i] = 'OK' AND p_kinds[i] = 'TRANSFER'
      ) l
      ORDER BY l.i, l.leg;

    RETURN QUERY
      SELECT i, v_outcome[i], v_detail[i], rec.records
      FROM generate_subscripts(p_clients, 1) i
      LEFT JOIN LATERAL (
        SELECT jsonb_agg(jsonb_build_object(
                 'id', t.id, 'operation_id', t.operation_id, 'operation_kind', o.kind, 'account_id', t.account_id,
                 'account_number', a.account_number, 'account_kind', a.kind, 'client_service_code', s.code,
                 'transaction_type', t.transaction_type, 'transaction_source', t.transaction_source, 'currency', t.currency,
                 'transaction_amount', t.transaction_amount::text, 'transaction_fee', t.transaction_fee::text,
                 'previous_balance', t.previous_balance::text, 'current_balance', t.current_balance::text,
                 'other_party_account', t.other_party_account, 'other_party_transaction_hash', t.other_party_transaction_hash,
                 'source_transaction_id', t.source_transaction_id, 'source_transaction_data', t.source_transaction_data,
                 'transaction_narration', t.transaction_narration, 'transaction_date', t.transaction_date,
                 'original_currency', t.original_currency, 'original_amount', t.original_amount::text,
                 'exchange_rate', t.exchange_rate::text)
               ORDER BY t.transaction_type = 'CREDIT', t.id) AS records
        FROM wallet_transactions t
        JOIN wallet_operations o ON o.id = t.operation_id
        JOIN ledger_accounts a ON a.id = t.account_id
        LEFT JOIN client_services s ON s.id = t.client_service_id
        WHERE v_outcome[i] IN ('OK', 'REPLAY') AND t.operation_id = coalesce(v_new_op[i], v_op[i])
      ) rec ON true
      ORDER BY i;
  END
  $fn$;
`;
