-- One client's wallet credits, debits and transfers of one group commit in one call: replay or 409, wallet states, service,
-- conversion, bounds and fee, then one ledger_post_entries call and the records, one answer row per request.
-- p_items holds the requests, a jsonb array of objects with named fields (WalletMoneyRequest,
-- src/transactions/wallet-money-batch.ts); an answer's detail names the values its refusal is worded with, and its
-- records are the request's transaction records (wallet_operation_rows).
CREATE OR REPLACE FUNCTION wallet_money_batch(
  p_client_id uuid,
  p_items jsonb,
  p_paying_states text[],
  p_receiving_states text[],
  p_max_rate_age_ms bigint
)
RETURNS TABLE(item_no integer, outcome text, detail jsonb, records jsonb)
LANGUAGE plpgsql
AS $fn$
#variable_conflict use_column
DECLARE
  -- The requests, one array per field, in item order.
  req_kinds text[]; req_refs text[]; req_fingerprints text[]; req_sources text[]; req_destinations text[];
  req_amounts numeric[]; req_currencies text[]; req_services text[]; req_narrations text[]; req_data jsonb[];
  req_dates timestamp with time zone[];
  v_key bigint;
  v_outcome text[] := '{}'; v_detail jsonb[] := '{}'; v_op uuid[] := '{}'; v_src uuid[] := '{}'; v_dst uuid[] := '{}';
  v_currency text[] := '{}'; v_service uuid[] := '{}'; v_fee numeric[] := '{}';
  -- v_amount: in the wallet's currency (converted or not); v_rate: null unless converted.
  v_amount numeric[] := '{}'; v_rate numeric[] := '{}';
  v_sys_key text[] := '{}'; v_sys_id uuid[] := '{}'; v_sys_no text[] := '{}';
  v_settlement uuid[] := '{}'; v_settlement_no text[] := '{}';
  v_e_item int[] := '{}'; v_to_post ledger_entry_to_post[] := '{}'; v_lines ledger_line[];
  v_entry bigint[] := '{}'; v_new_op uuid[] := '{}'; v_leg1 uuid[] := '{}'; v_leg2 uuid[] := '{}';
  v_src_before numeric[] := '{}'; v_src_after numeric[] := '{}'; v_dst_before numeric[] := '{}'; v_dst_after numeric[] := '{}';
  v_quote record; v_bounds jsonb; v_k int; i int; r record;
BEGIN
  SELECT array_agg(x.kind ORDER BY x.n), array_agg(x.reference ORDER BY x.n),
         array_agg(x.fingerprint ORDER BY x.n), array_agg(x.account_number ORDER BY x.n),
         array_agg(x.destination_account_number ORDER BY x.n), array_agg(x.amount ORDER BY x.n),
         array_agg(x.currency ORDER BY x.n), array_agg(x.service_code ORDER BY x.n), array_agg(x.narration ORDER BY x.n),
         array_agg(x.data ORDER BY x.n), array_agg(x.transaction_date ORDER BY x.n)
    INTO req_kinds, req_refs, req_fingerprints, req_sources, req_destinations, req_amounts, req_currencies,
         req_services, req_narrations, req_data, req_dates
    FROM ROWS FROM (jsonb_to_recordset(p_items) AS (kind text, reference text, fingerprint text, account_number text,
           destination_account_number text, amount numeric, currency text, service_code text, narration text,
           data jsonb, transaction_date timestamp with time zone))
         WITH ORDINALITY x(kind, reference, fingerprint, account_number, destination_account_number, amount, currency,
           service_code, narration, data, transaction_date, n);

  -- New references in concurrent batches queue here, each then seeing whether the other committed. A reference
  -- already recorded is a replay or a conflict whatever happens next, so replays take no lock.
  FOR v_key IN
    SELECT DISTINCT hashtextextended(p_client_id::text || ':' || x.ref, 0) AS k FROM unnest(req_refs) x(ref)
    WHERE NOT EXISTS (SELECT 1 FROM wallet_operations o WHERE o.client_id = p_client_id AND o.source_transaction_id = x.ref)
    ORDER BY k
  LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;

  -- Every check that does not depend on balances, per request, in the order the application reports them. Wallet
  -- and profile rows are share-locked, so a state change or a deactivation waits for the batch to commit.
  FOR r IN
    SELECT q.n, q.op, q.src, q.dst, q.currency, q.service, q.min_amount, q.max_amount,
      CASE
        WHEN q.op IS NOT NULL AND q.op_kind = q.kind AND q.op_fp IS NOT DISTINCT FROM q.fp THEN jsonb_build_object('outcome', 'REPLAY')
        WHEN q.op IS NOT NULL THEN jsonb_build_object('outcome', 'CONFLICT')
        WHEN q.kind = 'TRANSFER' AND q.src_no = q.dst_no THEN jsonb_build_object('outcome', 'SAME_WALLET')
        WHEN q.src IS NULL THEN jsonb_build_object('outcome', 'WALLET_NOT_FOUND', 'account_number', q.src_no)
        WHEN q.kind = 'TRANSFER' AND q.dst IS NULL THEN jsonb_build_object('outcome', 'WALLET_NOT_FOUND', 'account_number', q.dst_no)
        WHEN NOT q.src_profile_active
          THEN jsonb_build_object('outcome', 'PROFILE_DEACTIVATED', 'account_number', q.src_no)
        WHEN NOT (q.src_status = ANY (CASE q.src_role WHEN 'RECEIVE' THEN p_receiving_states ELSE p_paying_states END))
          THEN jsonb_build_object('outcome', 'WALLET_STATE', 'account_number', q.src_no, 'status', q.src_status, 'role', q.src_role)
        WHEN q.kind = 'TRANSFER' AND NOT q.dst_profile_active
          THEN jsonb_build_object('outcome', 'PROFILE_DEACTIVATED', 'account_number', q.dst_no)
        WHEN q.kind = 'TRANSFER' AND NOT (q.dst_status = ANY (p_receiving_states))
          THEN jsonb_build_object('outcome', 'WALLET_STATE', 'account_number', q.dst_no, 'status', q.dst_status, 'role', 'RECEIVE')
        WHEN q.kind = 'TRANSFER' AND q.currency <> q.dst_currency THEN jsonb_build_object('outcome', 'CURRENCY_MISMATCH')
        WHEN q.service IS NULL THEN jsonb_build_object('outcome', 'SERVICE_NOT_FOUND')
        WHEN NOT q.service_active THEN jsonb_build_object('outcome', 'SERVICE_INACTIVE', 'service_code', q.service_code)
        ELSE jsonb_build_object('outcome', 'OK')
      END AS verdict
    FROM (
      SELECT x.n::int AS n, x.kind, x.fp, x.src_no, x.dst_no,
             CASE x.kind WHEN 'CREDIT' THEN 'RECEIVE' ELSE 'PAY' END AS src_role,
             o.id AS op, o.kind::text AS op_kind, o.request_fingerprint AS op_fp,
             s.id AS src, s.currency, s.status AS src_status, s.profile_active AS src_profile_active,
             d.id AS dst, d.currency AS dst_currency, d.status AS dst_status, d.profile_active AS dst_profile_active,
             cs.id AS service, cs.code::text AS service_code, cs.is_active = 1 AS service_active,
             cs.minimum_transaction_amount AS min_amount, cs.maximum_transaction_amount AS max_amount
      FROM unnest(req_kinds, req_refs, req_fingerprints, req_sources, req_destinations, req_services)
           WITH ORDINALITY x(kind, ref, fp, src_no, dst_no, service_code, n)
      LEFT JOIN wallet_operations o ON o.client_id = p_client_id AND o.source_transaction_id = x.ref
      LEFT JOIN LATERAL (
        SELECT a.id, a.currency::text AS currency, w.status::text AS status, p.is_active = 1 AS profile_active
        FROM ledger_accounts a JOIN wallets w ON w.client_id = a.client_id AND w.id = a.id
        JOIN profiles p ON p.client_id = w.client_id AND p.id = w.profile_id
        WHERE a.client_id = p_client_id AND a.account_number = x.src_no FOR SHARE OF w, p) s ON true
      LEFT JOIN LATERAL (
        SELECT a.id, a.currency::text AS currency, w.status::text AS status, p.is_active = 1 AS profile_active
        FROM ledger_accounts a JOIN wallets w ON w.client_id = a.client_id AND w.id = a.id
        JOIN profiles p ON p.client_id = w.client_id AND p.id = w.profile_id
        WHERE x.kind = 'TRANSFER' AND a.client_id = p_client_id AND a.account_number = x.dst_no FOR SHARE OF w, p) d ON true
      LEFT JOIN client_services cs ON cs.client_id = p_client_id AND cs.code = x.service_code
    ) q
    ORDER BY q.n
  LOOP
    i := r.n;
    v_outcome[i] := r.verdict->>'outcome';
    v_detail[i] := r.verdict - 'outcome';
    v_op[i] := r.op; v_src[i] := r.src; v_dst[i] := r.dst; v_currency[i] := r.currency; v_service[i] := r.service;
    CONTINUE WHEN v_outcome[i] <> 'OK';

    -- The money checks, in the wallet's currency: a request in another one is converted first (a transfer at the
    -- rate of money leaving its source wallet).
    v_amount[i] := req_amounts[i];
    IF req_currencies[i] <> r.currency THEN
      SELECT * INTO v_quote FROM fx_conversion_rate(req_currencies[i], r.currency,
        CASE req_kinds[i] WHEN 'CREDIT' THEN 'INTO_WALLET' ELSE 'OUT_OF_WALLET' END, p_max_rate_age_ms);
      IF v_quote.rate IS NULL AND v_quote.newest_rate_at IS NULL THEN
        v_outcome[i] := 'NO_RATE'; v_detail[i] := jsonb_build_object('from_currency', req_currencies[i], 'to_currency', r.currency);
        CONTINUE;
      ELSIF v_quote.rate IS NULL THEN
        v_outcome[i] := 'STALE_RATE';
        v_detail[i] := jsonb_build_object('from_currency', req_currencies[i], 'to_currency', r.currency,
                                          'newest_rate_at', v_quote.newest_rate_at, 'max_age_ms', p_max_rate_age_ms);
        CONTINUE;
      END IF;
      v_rate[i] := v_quote.rate;
      v_amount[i] := round(req_amounts[i] * v_quote.rate, 4);
      IF v_amount[i] = 0 THEN
        v_outcome[i] := 'TOO_SMALL'; v_detail[i] := '{}';
        CONTINUE;
      END IF;
    END IF;
    v_bounds := client_service_amount_bounds(v_amount[i], r.min_amount, r.max_amount);
    IF v_bounds IS NOT NULL THEN
      v_outcome[i] := 'AMOUNT_BOUNDS'; v_detail[i] := v_bounds || jsonb_build_object('currency', r.currency);
      CONTINUE;
    END IF;
    v_fee[i] := client_service_fee(p_client_id, r.service, v_amount[i]);
    IF req_kinds[i] = 'CREDIT' AND v_fee[i] >= v_amount[i] THEN
      v_outcome[i] := 'FEE_TOO_HIGH'; v_detail[i] := jsonb_build_object('fee', v_fee[i]::text);
    END IF;
  END LOOP;

  -- The system accounts the accepted requests post to, each looked up (or created) once per group, in a fixed order
  -- so that groups creating the same accounts cannot deadlock: SETTLEMENT of the request's currency (the money's
  -- outside side), FEE_INCOME of the wallet's, and the FX_POSITION accounts of both when a credit or debit converts.
  FOR r IN
    SELECT DISTINCT s.kind, s.currency
    FROM generate_subscripts(req_refs, 1) i
    CROSS JOIN LATERAL (VALUES
      ('SETTLEMENT', req_currencies[i], req_kinds[i] <> 'TRANSFER'),
      ('FEE_INCOME', v_currency[i], v_fee[i] > 0),
      ('FX_POSITION', req_currencies[i], req_kinds[i] <> 'TRANSFER' AND v_rate[i] IS NOT NULL),
      ('FX_POSITION', v_currency[i], req_kinds[i] <> 'TRANSFER' AND v_rate[i] IS NOT NULL)
    ) s(kind, currency, used)
    WHERE v_outcome[i] = 'OK' AND s.used
    ORDER BY s.kind, s.currency
  LOOP
    v_sys_key := v_sys_key || (r.kind || r.currency);
    v_sys_id := v_sys_id || ledger_system_account(p_client_id, r.kind, r.currency);
  END LOOP;
  SELECT coalesce(array_agg(a.account_number::text ORDER BY x.n), '{}') INTO v_sys_no
    FROM unnest(v_sys_id) WITH ORDINALITY x(id, n)
    JOIN ledger_accounts a ON a.client_id = p_client_id AND a.id = x.id;

  -- One entry per accepted request, its lines in a fixed order: the two sides,
  -- the fee, then the currency exchange.
  FOR i IN 1 .. coalesce(cardinality(req_refs), 0) LOOP
    CONTINUE WHEN v_outcome[i] <> 'OK';
    v_e_item := v_e_item || i;
    IF req_kinds[i] <> 'TRANSFER' THEN
      v_k := array_position(v_sys_key, 'SETTLEMENT' || req_currencies[i]);
      v_settlement[i] := v_sys_id[v_k]; v_settlement_no[i] := v_sys_no[v_k];
    END IF;
    -- req_amounts[i] is what moves outside (in the request's currency), v_amount[i] what moves in the wallet.
    IF req_kinds[i] = 'CREDIT' THEN
      v_lines := ARRAY[ROW(v_settlement[i], -req_amounts[i])::ledger_line, ROW(v_src[i], v_amount[i] - v_fee[i])::ledger_line];
    ELSIF req_kinds[i] = 'DEBIT' THEN
      v_lines := ARRAY[ROW(v_src[i], -(v_amount[i] + v_fee[i]))::ledger_line, ROW(v_settlement[i], req_amounts[i])::ledger_line];
    ELSE
      v_lines := ARRAY[ROW(v_src[i], -(v_amount[i] + v_fee[i]))::ledger_line, ROW(v_dst[i], v_amount[i])::ledger_line];
    END IF;
    IF v_fee[i] > 0 THEN
      v_lines := v_lines || ROW(v_sys_id[array_position(v_sys_key, 'FEE_INCOME' || v_currency[i])], v_fee[i])::ledger_line;
    END IF;
    IF req_kinds[i] <> 'TRANSFER' AND v_rate[i] IS NOT NULL THEN
      v_lines := v_lines || ARRAY[
        ROW(v_sys_id[array_position(v_sys_key, 'FX_POSITION' || req_currencies[i])],
            CASE req_kinds[i] WHEN 'CREDIT' THEN req_amounts[i] ELSE -req_amounts[i] END)::ledger_line,
        ROW(v_sys_id[array_position(v_sys_key, 'FX_POSITION' || v_currency[i])],
            CASE req_kinds[i] WHEN 'CREDIT' THEN -v_amount[i] ELSE v_amount[i] END)::ledger_line];
    END IF;
    v_to_post := v_to_post || ROW(p_client_id,
      CASE req_kinds[i] WHEN 'CREDIT' THEN 'WALLET_CREDIT' WHEN 'DEBIT' THEN 'WALLET_DEBIT' ELSE 'WALLET_TRANSFER' END,
      v_lines)::ledger_entry_to_post;
  END LOOP;

  FOR r IN SELECT * FROM ledger_post_entries(v_to_post) LOOP
    i := v_e_item[r.entry_no];
    IF r.refused_account IS NOT NULL THEN
      v_outcome[i] := 'INSUFFICIENT'; v_detail[i] := jsonb_build_object('account_number', r.refused_account);
    ELSE
      v_entry[i] := r.entry_id;
      IF r.account_id = v_src[i] THEN v_src_before[i] := r.balance_before; v_src_after[i] := r.balance_after; END IF;
      IF r.account_id = v_dst[i] THEN v_dst_before[i] := r.balance_before; v_dst_after[i] := r.balance_after; END IF;
    END IF;
  END LOOP;

  FOR i IN 1 .. coalesce(cardinality(req_refs), 0) LOOP
    CONTINUE WHEN v_outcome[i] <> 'OK';
    v_new_op[i] := gen_random_uuid(); v_leg1[i] := gen_random_uuid();
    IF req_kinds[i] = 'TRANSFER' THEN v_leg2[i] := gen_random_uuid(); END IF;
  END LOOP;

  -- No ON CONFLICT: the advisory locks make a duplicate impossible here unless another path (a reversal) wrote the
  -- reference meanwhile, and then the batch fails as a whole and the application retries its requests one by one.
  INSERT INTO wallet_operations (id, client_id, kind, source_transaction_id, request_fingerprint, entry_id)
    SELECT v_new_op[i], p_client_id, req_kinds[i], req_refs[i], req_fingerprints[i], v_entry[i]
    FROM generate_subscripts(req_refs, 1) i WHERE v_outcome[i] = 'OK' ORDER BY i;
  PERFORM wallet_record_transactions(p_ids => array_agg(l.id), p_operation_ids => array_agg(v_new_op[l.i]),
      p_client_ids => array_agg(p_client_id), p_account_ids => array_agg(l.account),
      p_client_service_ids => array_agg(v_service[l.i]), p_types => array_agg(l.type), p_sources => array_agg(l.source),
      p_currencies => array_agg(v_currency[l.i]), p_amounts => array_agg(v_amount[l.i]), p_fees => array_agg(l.fee),
      p_previous_balances => array_agg(l.before), p_current_balances => array_agg(l.after),
      p_other_party_accounts => array_agg(l.other_party), p_other_party_transaction_hashes => array_agg(l.other_leg),
      p_source_transaction_ids => array_agg(req_refs[l.i]), p_source_transaction_data => array_agg(req_data[l.i]),
      p_narrations => array_agg(req_narrations[l.i]), p_transaction_dates => array_agg(req_dates[l.i]),
      p_original_currencies => array_agg(CASE WHEN v_rate[l.i] IS NOT NULL THEN req_currencies[l.i] END),
      p_original_amounts => array_agg(CASE WHEN v_rate[l.i] IS NOT NULL THEN req_amounts[l.i] END),
      p_exchange_rates => array_agg(v_rate[l.i]))
    FROM (
      SELECT i, 1 AS leg, v_leg1[i] AS id, v_src[i] AS account,
             CASE req_kinds[i] WHEN 'CREDIT' THEN 'CREDIT' ELSE 'DEBIT' END AS type,
             CASE req_kinds[i] WHEN 'CREDIT' THEN 'EXTERNAL_CREDIT' WHEN 'DEBIT' THEN 'EXTERNAL_DEBIT' ELSE 'INTERNAL_TRANSFER_DEBIT' END AS source,
             v_fee[i] AS fee, v_src_before[i] AS before, v_src_after[i] AS after,
             CASE WHEN req_kinds[i] = 'TRANSFER' THEN req_destinations[i] ELSE v_settlement_no[i] END AS other_party,
             v_leg2[i]::text AS other_leg
      FROM generate_subscripts(req_refs, 1) i WHERE v_outcome[i] = 'OK'
      UNION ALL
      SELECT i, 2, v_leg2[i], v_dst[i], 'CREDIT', 'INTERNAL_TRANSFER_CREDIT', 0, v_dst_before[i], v_dst_after[i], req_sources[i], v_leg1[i]::text
      FROM generate_subscripts(req_refs, 1) i WHERE v_outcome[i] = 'OK' AND req_kinds[i] = 'TRANSFER'
      ORDER BY 1, 2
    ) l;

  RETURN QUERY
    SELECT i, v_outcome[i], v_detail[i], rec.records
    FROM generate_subscripts(req_refs, 1) i
    LEFT JOIN wallet_operation_rows(p_client_id, ARRAY(
                SELECT coalesce(v_new_op[k], v_op[k]) FROM generate_subscripts(req_refs, 1) k WHERE v_outcome[k] IN ('OK', 'REPLAY')))
      rec ON v_outcome[i] IN ('OK', 'REPLAY') AND rec.operation_id = coalesce(v_new_op[i], v_op[i])
    ORDER BY i;
END
$fn$;
