/**
 * Where each table lives on a Citus cluster (docs/scaling.md, "The Citus design"): one list read by the distribution
 * checks of the test suite and by what distributes a database.
 */
export const DISTRIBUTION_PLAN = {
  /** Hash-distributed by client_id, all co-located with ledger_accounts. */
  distributed: [
    'account_types',
    'airtime_recipients',
    'airtime_requests',
    'callback_attempts',
    'callback_deliveries',
    'checkout_sessions',
    'client_callback_settings',
    'client_service_fee_tiers',
    'client_service_partners',
    'client_services',
    'client_signing_secrets',
    'collection_reversals',
    'float_alerts',
    'float_holds',
    'float_reservations',
    'journal_entries',
    'ledger_accounts',
    'ledger_archived_balances',
    'notifications',
    'outbox',
    'payments',
    'payouts',
    'postings',
    'profiles',
    'rail_callbacks',
    'rail_requests',
    'wallet_operations',
    'wallet_transactions',
    'wallets',
  ],
  /** Copied to every node: small, rarely written, read before the client is known or by every shard. */
  reference: ['api_keys', 'clients', 'fx_rates', 'users'],
  /** On the coordinator only: never written in a money transaction. */
  local: [
    'fx_refreshes',
    'portal_sessions',
    'rail_health',
    'reconciliation_openings',
    'reconciliation_rows',
    'reconciliation_runs',
    'schema_function_sources',
    'schema_migrations',
    'settings',
    'sign_in_attempts',
    'unmatched_rail_callbacks',
  ],
} as const;

/** A function is delegated to the node of its client when it takes the client as `p_client_id`. */
export const DISTRIBUTION_ARGUMENT = 'p_client_id';
