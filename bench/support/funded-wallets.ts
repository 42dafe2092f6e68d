import { Client } from 'pg';

/**
 * `count` wallets of a client written in bulk SQL and funded with `funding` each, the way MoneyMovementsService.fund
 * does it: per wallet one FUNDING operation owning one entry (the client's KES settlement account −X, the wallet +X)
 * and one EXTERNAL_CREDIT transaction record, balances moved to match. One transaction; the wallets' account numbers,
 * in order.
 */
export async function createFundedWallets(
  db: Client,
  o: { clientId: string; profileId: string; accountTypeId: string; count: number; funding: string },
): Promise<string[]> {
  await db.query('BEGIN');
  try {
    const [settlement] = (
      await db.query(
        `SELECT id, account_number, balance, posting_count FROM ledger_accounts
         WHERE client_id = $1 AND kind = 'SETTLEMENT' AND currency = 'KES' FOR UPDATE`,
        [o.clientId],
      )
    ).rows;
    if (!settlement) throw new Error(`client ${o.clientId} has no KES settlement account`);
    const wallets = (
      await db.query(
        `WITH acc AS (
           INSERT INTO ledger_accounts (client_id, kind, currency, minimum_balance, can_overdraw)
           SELECT $1, 'WALLET', 'KES', 0, false FROM generate_series(1, $2) RETURNING id, account_number),
         w AS (
           INSERT INTO wallets (id, client_id, profile_id, account_type_id, account_name, status)
           SELECT id, $1, $3, $4, 'Bench wallet ' || account_number, 'ACTIVE' FROM acc)
         SELECT id, account_number FROM acc ORDER BY account_number`,
        [o.clientId, o.count, o.profileId, o.accountTypeId],
      )
    ).rows as Array<{ id: string; account_number: string }>;
    await db.query(`CREATE TEMP TABLE bench_fund (wallet_id uuid, i bigint, entry_id bigint, op_id uuid) ON COMMIT DROP`);
    await db.query(
      `INSERT INTO bench_fund SELECT w.id, w.i, nextval('journal_entries_id_seq'), gen_random_uuid()
       FROM unnest($1::uuid[]) WITH ORDINALITY w(id, i) ORDER BY w.i`,
      [wallets.map((w) => w.id)],
    );
    await db.query(`INSERT INTO journal_entries (id, client_id, kind) SELECT entry_id, $1, 'WALLET_FUNDING' FROM bench_fund ORDER BY i`, [
      o.clientId,
    ]);
    await db.query(
      `INSERT INTO postings (entry_id, client_id, account_id, currency, amount, balance_after, account_seq)
       SELECT entry_id, $4, $1, 'KES', -$2::numeric, $3::numeric - $2::numeric * i, $5::bigint + i FROM bench_fund ORDER BY i`,
      [settlement.id, o.funding, settlement.balance, o.clientId, settlement.posting_count],
    );
    await db.query(
      `INSERT INTO postings (entry_id, client_id, account_id, currency, amount, balance_after, account_seq)
       SELECT entry_id, $2, wallet_id, 'KES', $1::numeric, $1::numeric, 1 FROM bench_fund ORDER BY i`,
      [o.funding, o.clientId],
    );
    await db.query(
      `INSERT INTO wallet_operations (id, client_id, kind, entry_id) SELECT op_id, $1, 'FUNDING', entry_id FROM bench_fund ORDER BY i`,
      [o.clientId],
    );
    await db.query(
      `INSERT INTO wallet_transactions (operation_id, client_id, account_id, transaction_type, transaction_source, currency,
         transaction_amount, previous_balance, current_balance, other_party_account, transaction_narration, transaction_date)
       SELECT op_id, $1, wallet_id, 'CREDIT', 'EXTERNAL_CREDIT', 'KES', $2::numeric, 0, $2::numeric, $3, 'Wallet funding', now() FROM bench_fund ORDER BY i`,
      [o.clientId, o.funding, settlement.account_number],
    );
    await db.query(
      `UPDATE ledger_accounts SET balance = balance + $1::numeric, posting_count = 1 WHERE id IN (SELECT wallet_id FROM bench_fund)`,
      [o.funding],
    );
    await db.query(`UPDATE ledger_accounts SET balance = balance - $1::numeric * $2, posting_count = posting_count + $2 WHERE id = $3`, [
      o.funding,
      wallets.length,
      settlement.id,
    ]);
    await db.query('COMMIT');
    return wallets.map((w) => w.account_number);
  } catch (error) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
