import { EntityManager } from 'typeorm';

export interface InvariantResult {
  name: string;
  description: string;
  violations: Array<Record<string, unknown>>;
}

/**
 * The ledger invariants of the provider contract §3, one SQL query each. Each query returns the offending rows,
 * so an empty result means the invariant holds. Rows are grouped and joined by client too: every entry, account and
 * record is one client's, and on Citus that keeps each query on co-located shards (docs/scaling.md).
 */
export const LEDGER_INVARIANTS: Array<{ name: string; description: string; sql: string }> = [
  {
    name: 'a_entries_balance',
    description: 'every entry balances per currency',
    sql: `SELECT entry_id, currency, sum(amount) AS imbalance
          FROM postings GROUP BY client_id, entry_id, currency HAVING sum(amount) <> 0 LIMIT 100`,
  },
  {
    name: 'b_balances_match_postings',
    description: "each account's stored balance equals the sum of its postings (archived months by their sum)",
    sql: `SELECT a.account_number, a.balance, coalesce(x.balance, 0) + coalesce(p.total, 0) AS postings_total
          FROM ledger_accounts a
          LEFT JOIN (SELECT client_id, account_id, sum(amount) AS total FROM postings GROUP BY client_id, account_id) p
            ON p.client_id = a.client_id AND p.account_id = a.id
          LEFT JOIN ledger_archived_balances x ON x.client_id = a.client_id AND x.account_id = a.id
          WHERE a.balance <> coalesce(x.balance, 0) + coalesce(p.total, 0) LIMIT 100`,
  },
  {
    // Floors govern debits (wallet document §8): a wallet opened with a floor above zero starts below it and
    // may be credited up to it, but no posting that lowers a wallet may leave it below its floor.
    name: 'c_no_debit_below_floor',
    description: 'no posting that lowers a wallet leaves it below its floor, unless it can overdraw',
    sql: `SELECT a.account_number, p.entry_id, p.balance_after, a.minimum_balance
          FROM postings p JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.account_id
          WHERE a.kind = 'WALLET' AND NOT a.can_overdraw AND p.amount < 0 AND p.balance_after < a.minimum_balance LIMIT 100`,
  },
  {
    name: 'd_one_entry_per_business_record',
    description: 'every business record with money effect has exactly one entry per state change, and every entry has one business record',
    // One full join on (client_id, entry): Citus runs it shard by shard (no CTE correlated into a shard's query).
    sql: `SELECT coalesce(e.id, r.entry_id) AS entry_id, coalesce(e.kind::text, 'missing entry') AS kind,
                 coalesce(r.n, 0) AS business_records
          FROM journal_entries e
          FULL JOIN (SELECT client_id, entry_id, count(*) AS n FROM ledger_business_records GROUP BY client_id, entry_id) r
            ON r.client_id = e.client_id AND r.entry_id = e.id
          WHERE e.id IS NULL OR coalesce(r.n, 0) <> 1
          LIMIT 100`,
  },
  {
    // Statements order an account's postings by this number (ids follow events only on one node). Numbers within
    // 1 .. posting_count, each once, as many as posting_count less the archived: exact while nothing of the account
    // is archived. An archived month stands in by its count: a posting applied just after midnight can be booked in
    // the month before (created_at is its transaction's start), after postings booked in the new one, so which
    // numbers left with a month is not known without the archive.
    name: 'e_postings_numbered_per_account',
    description: "each account's postings are numbered 1 .. its posting_count, each number once (archived months by their count)",
    sql: `SELECT a.account_number, a.posting_count, coalesce(x.postings, 0) AS archived, p.first_seq, p.last_seq, p.postings, p.numbers
          FROM ledger_accounts a
          LEFT JOIN (SELECT client_id, account_id, min(account_seq) AS first_seq, max(account_seq) AS last_seq,
                            count(*) AS postings, count(DISTINCT account_seq) AS numbers
                     FROM postings GROUP BY client_id, account_id) p
            ON p.client_id = a.client_id AND p.account_id = a.id
          LEFT JOIN ledger_archived_balances x ON x.client_id = a.client_id AND x.account_id = a.id
          WHERE coalesce(p.postings, 0) <> a.posting_count - coalesce(x.postings, 0)
             OR p.numbers <> p.postings OR p.first_seq < 1 OR p.last_seq > a.posting_count
          LIMIT 100`,
  },
];

export async function verifyLedger(manager: EntityManager): Promise<InvariantResult[]> {
  const results: InvariantResult[] = [];
  for (const invariant of LEDGER_INVARIANTS) {
    results.push({ name: invariant.name, description: invariant.description, violations: await manager.query(invariant.sql) });
  }
  return results;
}
