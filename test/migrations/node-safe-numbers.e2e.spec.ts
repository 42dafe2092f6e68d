import { Client } from 'pg';

/**
 * Issue 31 item 4: on Citus a worker's copy of a sequence counts from group << 48. The column defaults that make
 * account numbers and codes are read from the migrated schema and evaluated with the values each node's sequence
 * would give: every result is distinct and in its documented format, and one node (group 0) gets what it always got.
 */
const GROUPS = [0n, 1n, 2n, 7n, 99n];
const COUNTS = [1n, 100001n, 123456n, 99999999n];
const nodeValue = (group: bigint, n: bigint) => (group << 48n) + n;

describe('account numbers and codes whichever node makes them', () => {
  let db: Client;
  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => db.end());

  async function defaultOf(table: string, column: string): Promise<string> {
    const { rows } = await db.query<{ expr: string }>(
      `SELECT pg_get_expr(d.adbin, d.adrelid) AS expr FROM pg_attrdef d
         JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
        WHERE d.adrelid = $1::regclass AND a.attname = $2`,
      [table, column],
    );
    return rows[0].expr;
  }

  /** The default with its nextval(...) given `value`, as the node's sequence would. */
  async function made(expr: string, value: bigint): Promise<string> {
    const withValue = expr.replace(/nextval\('[a-z_]+'::regclass\)/, `${value}::bigint`);
    expect(withValue).not.toBe(expr);
    const { rows } = await db.query<{ v: string }>(`SELECT (${withValue})::text AS v`);
    return rows[0].v;
  }

  // Codes keep at most 10 digits after their letters, as account numbers do (without the fold a worker's code has 15).
  for (const [table, column, format, onOneNode] of [
    ['ledger_accounts', 'account_number', /^1\d{10}$/, (n: bigint) => `1${n.toString().padStart(10, '0')}`],
    ['account_types', 'code', /^AT\d{1,10}$/, (n: bigint) => `AT${n}`],
    ['client_services', 'code', /^CS\d{1,10}$/, (n: bigint) => `CS${n}`],
  ] as const) {
    it(`${table}.${column}: distinct across nodes, in its format, unchanged on one node`, async () => {
      const expr = await defaultOf(table, column);
      const values: string[] = [];
      for (const group of GROUPS) for (const n of COUNTS) values.push(await made(expr, nodeValue(group, n)));
      expect(new Set(values).size).toBe(values.length);
      for (const value of values) expect(value).toMatch(format);
      expect(values.slice(0, COUNTS.length)).toEqual(COUNTS.map(onOneNode));
    });
  }
});
