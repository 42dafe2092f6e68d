-- Checks split partners at acceptance: profiles, wallets, currency and shares against the amount; answers the refusal
-- (jsonb, `problem` and its values by name), or the shares with their wallets' ids.
CREATE OR REPLACE FUNCTION split_settlements_check(
  p_client_id uuid,
  p_service_id uuid,
  p_currency text,
  p_amount numeric,
  p_splits jsonb
)
RETURNS TABLE(refusal jsonb, shares jsonb)
LANGUAGE plpgsql STABLE
AS $fn$
#variable_conflict use_column
DECLARE
  v_mandatory text[];
  v_missing   text[];
  v_bad       record;
  v_total     numeric;
BEGIN
  SELECT coalesce(array_agg(a.account_number::text ORDER BY a.account_number), '{}') INTO v_mandatory
  FROM client_service_partners p JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.account_id
  WHERE p.client_id = p_client_id AND p.client_service_id = p_service_id;
  IF p_splits IS NULL THEN
    IF cardinality(v_mandatory) > 0 THEN
      RETURN QUERY SELECT jsonb_build_object('problem', 'SPLIT_MANDATORY', 'accounts', to_jsonb(v_mandatory)), NULL::jsonb;
    ELSE
      RETURN QUERY SELECT NULL::jsonb, NULL::jsonb;
    END IF;
    RETURN;
  END IF;

  SELECT i.account, CASE
           WHEN w.id IS NULL THEN 'SPLIT_PARTNER_UNKNOWN'
           WHEN w.status <> 'ACTIVE' OR NOT w.profile_active THEN 'SPLIT_PARTNER_INACTIVE'
           WHEN w.currency <> p_currency THEN 'SPLIT_PARTNER_CURRENCY'
         END AS problem
    INTO v_bad
  FROM jsonb_array_elements(p_splits) WITH ORDINALITY AS e(item, ord)
  CROSS JOIN LATERAL (SELECT e.item->>'account' AS account) i
  LEFT JOIN LATERAL (
    SELECT a.id, a.currency::text AS currency, wl.status, pr.is_active = 1 AS profile_active
    FROM ledger_accounts a JOIN wallets wl ON wl.client_id = a.client_id AND wl.id = a.id
    JOIN profiles pr ON pr.client_id = wl.client_id AND pr.id = wl.profile_id
    WHERE a.client_id = p_client_id AND a.account_number = i.account
  ) w ON true
  WHERE w.id IS NULL OR w.status <> 'ACTIVE' OR NOT w.profile_active OR w.currency <> p_currency
  ORDER BY e.ord LIMIT 1;
  IF v_bad.problem IS NOT NULL THEN
    RETURN QUERY SELECT jsonb_build_object('problem', v_bad.problem, 'account', v_bad.account)
      || CASE WHEN v_bad.problem = 'SPLIT_PARTNER_CURRENCY' THEN jsonb_build_object('currency', p_currency) ELSE '{}' END,
      NULL::jsonb;
    RETURN;
  END IF;

  SELECT sum((e.item->>'amount')::numeric) INTO v_total FROM jsonb_array_elements(p_splits) e(item);
  IF v_total > p_amount THEN
    RETURN QUERY SELECT jsonb_build_object('problem', 'SPLIT_TOTAL', 'total', v_total::text, 'amount', p_amount::text), NULL::jsonb;
    RETURN;
  END IF;

  SELECT coalesce(array_agg(m ORDER BY m), '{}') INTO v_missing FROM unnest(v_mandatory) m
  WHERE m NOT IN (SELECT e.item->>'account' FROM jsonb_array_elements(p_splits) e(item));
  IF cardinality(v_missing) > 0 THEN
    RETURN QUERY SELECT jsonb_build_object('problem', 'SPLIT_MANDATORY', 'accounts', to_jsonb(v_missing)), NULL::jsonb;
    RETURN;
  END IF;

  RETURN QUERY
  SELECT NULL::jsonb, jsonb_agg(e.item || jsonb_build_object('accountId', a.id) ORDER BY e.ord)
  FROM jsonb_array_elements(p_splits) WITH ORDINALITY AS e(item, ord)
  JOIN ledger_accounts a ON a.client_id = p_client_id AND a.account_number = e.item->>'account';
END
$fn$;
