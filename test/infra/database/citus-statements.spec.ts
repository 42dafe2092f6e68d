import { DISTRIBUTION_PLAN } from '../../../src/infra/database/distribution-plan';
import {
  findings,
  functionsCalledBy,
  loadParser,
  madeStatement,
  repositoryQueries,
  SqlFunction,
  sqlFunctions,
  tablesIn,
  OwnFunctions,
} from './sql-statements';

/**
 * Issue 31: on Citus, a statement runs on one node only when it names its client. Every statement of every SQL
 * function and every query written in src/ is read with Postgres's own parser (libpg-query) and held to the rules of
 * `findings`: a write, a locking read or a statement of a SQL function filters every distributed table on client_id;
 * a read across clients joins distributed tables on client_id; an INSERT into a distributed table names client_id; no
 * reference table correlates into a distributed one; no upsert sets a value of the clock; no LANGUAGE sql function reads or writes a distributed table (Citus
 * cannot plan those on shards).
 *
 * What the code does not yet meet is listed below, by where it is written: the list must equal what is found, so a
 * new statement off its shard fails the test and a fixed one must leave the list. docs/scaling.md ("Checked by a
 * test") says where the list stands.
 */
const KNOWN_FINDINGS: Record<string, string[]> = {};

const UNREAD_QUERIES = [
  'src/collection-reversals/collection-reversals.service.ts:CollectionReversalsService.load',
  'src/collections/payments.repository.ts:PaymentsRepository.forReversal',
  'src/collections/payments.repository.ts:PaymentsRepository.statement',
  'src/common/listing.ts:countSql.text',
  'src/common/listing.ts:dailyTotalsSql',
  'src/common/listing.ts:listSql.text',
  'src/infra/database/partitions.ts:createMonth',
  'src/infra/database/partitions.ts:ensurePartitions',
  'src/infra/metrics/engine-metrics.ts:EngineMetrics.onModuleInit.rows',
  'src/ledger/archived-balances.ts:carryArchivedBalances',
];
const UNREAD_FUNCTIONS = ['collection_accept_charge'];

/**
 * LANGUAGE sql on distributed tables: Citus plans such a body with parameters only when it is one single-table
 * statement, and refuses a join ("could not create distributed plan … use of parameters in SQL functions", seen on
 * Citus 13.2.2, on the coordinator and delegated alike), also when the function is inlined into a query with
 * parameters (as wallet_transaction_rows was under the history read); PL/pgSQL bodies are planned with the values.
 */
const SQL_FUNCTIONS_ON_DISTRIBUTED_TABLES: string[] = [];

const rulesOf = (sql: string, fn?: string, shardFunctions?: ReadonlySet<string>, own?: OwnFunctions) =>
  findings(madeStatement(sql, fn), DISTRIBUTION_PLAN, shardFunctions, own).map((f) => `${f.table} ${f.rule}`);

/**
 * The functions that read or write distributed tables, themselves or through the functions they call: Citus runs
 * one called by a query on a shard inside that query, where their own queries are refused.
 */
function functionsOnShards(functions: SqlFunction[]): Set<string> {
  const onShards = new Set(
    functions
      .filter((f) => f.statements.some((s) => tablesIn(s).some((t) => (DISTRIBUTION_PLAN.distributed as readonly string[]).includes(t))))
      .map((f) => f.name),
  );
  for (let grew = true; grew;) {
    grew = false;
    for (const f of functions) {
      if (!onShards.has(f.name) && f.statements.some((s) => functionsCalledBy(s).some((name) => onShards.has(name)))) {
        onShards.add(f.name);
        grew = true;
      }
    }
  }
  return onShards;
}

describe('every statement names its shard (Citus)', () => {
  let functions: SqlFunction[];
  let queries: ReturnType<typeof repositoryQueries>;

  beforeAll(async () => {
    await loadParser();
    functions = sqlFunctions();
    queries = repositoryQueries();
  });

  it('finds what Citus refuses, and passes what it runs', () => {
    // Locking read without the distribution column (the posting core's lock, issue 31 item 5).
    expect(rulesOf('SELECT 1 FROM ledger_accounts WHERE id = ANY ($1) FOR NO KEY UPDATE')).toEqual(['ledger_accounts no-client-id-filter']);
    expect(rulesOf('SELECT 1 FROM ledger_accounts WHERE client_id = $2 AND id = ANY ($1) FOR NO KEY UPDATE')).toEqual([]);
    // Inside a SQL function every statement is held, reads too; a join passes the pin along client_id.
    expect(rulesOf('SELECT 1 FROM payments p JOIN client_services s ON s.id = p.client_service_id WHERE p.client_id = $1', 'f')).toEqual([
      'client_services no-client-id-filter',
    ]);
    expect(
      rulesOf(
        'SELECT 1 FROM payments p JOIN client_services s ON s.client_id = p.client_id AND s.id = p.client_service_id WHERE p.client_id = $1',
        'f',
      ),
    ).toEqual([]);
    // A read across clients may span shards, but its joins must be co-located (ledger:verify, issue 31 item 6).
    expect(rulesOf('SELECT 1 FROM postings p JOIN ledger_accounts a ON a.id = p.account_id')).toEqual([
      'postings join-not-on-client-id',
      'ledger_accounts join-not-on-client-id',
    ]);
    expect(rulesOf('SELECT 1 FROM postings p JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.account_id')).toEqual([]);
    expect(rulesOf('UPDATE payouts SET status = 1 WHERE id = $1')).toEqual(['payouts no-client-id-filter']);
    expect(rulesOf('INSERT INTO outbox (topic, payload) VALUES ($1, $2)')).toEqual(['outbox insert-without-client-id']);
    // Citus evaluates an upsert's DO UPDATE SET on the shard: only IMMUTABLE functions (the clock through EXCLUDED).
    expect(
      rulesOf('INSERT INTO fx_rates (currency, updated_at) VALUES ($1, now()) ON CONFLICT (currency) DO UPDATE SET updated_at = now()'),
    ).toEqual(['fx_rates clock-in-upsert']);
    expect(
      rulesOf(
        'INSERT INTO fx_rates (currency, updated_at) VALUES ($1, now()) ON CONFLICT (currency) DO UPDATE SET updated_at = EXCLUDED.updated_at',
      ),
    ).toEqual([]);
    // The start-up query of issue 31 item 2, and its uncorrelated form.
    expect(
      rulesOf('SELECT c.id FROM clients c WHERE NOT EXISTS (SELECT 1 FROM client_signing_secrets s WHERE s.client_id = c.id)'),
    ).toEqual(['client_signing_secrets reference-correlates-into-distributed']);
    expect(rulesOf('SELECT c.id FROM clients c WHERE c.id NOT IN (SELECT s.client_id FROM client_signing_secrets s)')).toEqual([]);
    // An UPDATE may not carry a clock inside CASE or COALESCE, nor a VOLATILE function (seen on Citus 13.2.2).
    expect(rulesOf('UPDATE payouts SET checked_at = coalesce(checked_at, now()) WHERE client_id = $1')).toEqual([
      'payouts clock-in-conditional-update',
    ]);
    expect(rulesOf('UPDATE payouts SET checked_at = least(checked_at, now()) WHERE client_id = $1')).toEqual([]);
    expect(rulesOf('UPDATE outbox SET job_key = gen_random_uuid() WHERE client_id = $1')).toEqual(['outbox volatile-in-update']);
    // Also from a CTE the SET reads, and with the code base's own functions by their declared volatility
    // (checkout_follow_payments's session_ended in a CASE, seen on Citus 13.2.2).
    const own: OwnFunctions = new Map([
      ['session_ended', { volatility: 'volatile', language: 'sql' }],
      ['status_code', { volatility: 'immutable', language: 'sql' }],
    ]);
    const fromCte = (test: string) =>
      `WITH next AS (SELECT cs.id, CASE WHEN ${test} THEN 820 ELSE 803 END AS status FROM checkout_sessions cs WHERE cs.client_id = $1)
       UPDATE checkout_sessions cs SET status = n.status FROM next n WHERE cs.client_id = $1 AND cs.id = n.id`;
    expect(rulesOf(fromCte('session_ended(cs.expires_at)'), undefined, undefined, own)).toEqual([
      'checkout_sessions clock-in-conditional-update',
    ]);
    expect(rulesOf(fromCte('cs.id = ANY($2)'), undefined, undefined, own)).toEqual([]);
    expect(rulesOf(fromCte('status_code(cs.status) = 1'), undefined, undefined, own)).toEqual([]);
    expect(
      rulesOf('UPDATE checkout_sessions SET ended = session_ended(expires_at) WHERE client_id = $1', undefined, undefined, own),
    ).toEqual(['checkout_sessions volatile-in-update']);
    // A simple CASE holding a CASE, on a shard (checkout_follow_payments's cause, seen on Citus 13.2.2).
    const byCause = (inner: string) =>
      `SELECT CASE p_cause WHEN 'RESULT' THEN ${inner} END FROM checkout_sessions cs WHERE cs.client_id = p_client_id`;
    expect(rulesOf(byCause('CASE WHEN cs.amount > 0 THEN 801 ELSE 803 END'), 'f')).toEqual(['checkout_sessions case-in-simple-case']);
    expect(rulesOf(byCause('801'), 'f')).toEqual([]);
    expect(rulesOf(byCause(`status_code('PAID')`), 'f', undefined, own)).toEqual(['checkout_sessions case-in-simple-case']);
    expect(
      rulesOf(
        `SELECT CASE WHEN p_cause = 'RESULT' THEN CASE WHEN cs.amount > 0 THEN 801 END END FROM checkout_sessions cs WHERE cs.client_id = p_client_id`,
        'f',
      ),
    ).toEqual([]);
    // A function that reads shards, called per row of a query on a shard (wallet_fund's records, seen on Citus 13.2.2);
    // called on its own, with the values read first, it runs.
    const onShards = new Set(['wallet_record_transactions']);
    expect(
      rulesOf('SELECT wallet_record_transactions(a.id) FROM ledger_accounts a WHERE a.client_id = p_client_id', 'f', onShards),
    ).toEqual(['wallet_record_transactions function-in-shard-query']);
    expect(rulesOf('SELECT wallet_record_transactions(v_id) FROM unnest(v_ids) v_id', 'f', onShards)).toEqual([]);
  });

  it('reads every SQL function, but the PL/pgSQL bodies that assign fields of composite variables', () => {
    expect(functions.length).toBeGreaterThan(30);
    expect(functions.filter((f) => f.unread).map((f) => f.name)).toEqual(UNREAD_FUNCTIONS);
  });

  it('reads every query written in src/, but the ones spliced from fragments at run time', () => {
    expect(queries.statements.length).toBeGreaterThan(150);
    expect([...new Set(queries.unread)].sort()).toEqual(UNREAD_QUERIES);
  });

  it('keeps every statement on its shard, but for the known ones', () => {
    const found: Record<string, string[]> = {};
    const onShards = functionsOnShards(functions);
    const own: OwnFunctions = new Map(functions.map((f) => [f.name, f]));
    for (const s of [...functions.flatMap((f) => f.statements), ...queries.statements]) {
      for (const f of findings(s, DISTRIBUTION_PLAN, onShards, own)) (found[s.origin] ??= []).push(`${f.table} ${f.rule}`);
    }
    const sorted = (byOrigin: Record<string, string[]>) =>
      Object.fromEntries(
        Object.entries(byOrigin)
          .map(([origin, list]) => [origin, [...new Set(list)].sort()])
          .sort(([a], [b]) => (a < b ? -1 : 1)),
      );
    expect(sorted(found)).toEqual(sorted(KNOWN_FINDINGS));
  });

  it('writes no LANGUAGE sql function over distributed or reference tables, but the known ones', () => {
    const citusTables: readonly string[] = [...DISTRIBUTION_PLAN.distributed, ...DISTRIBUTION_PLAN.reference];
    const onShards = functions
      .filter((f) => f.language === 'sql')
      .filter((f) => f.statements.some((s) => tablesIn(s).some((t) => citusTables.includes(t))))
      .map((f) => f.name)
      .sort();
    expect(onShards).toEqual(SQL_FUNCTIONS_ON_DISTRIBUTED_TABLES);
  });
});
