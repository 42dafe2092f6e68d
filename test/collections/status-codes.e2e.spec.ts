import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Client } from 'pg';
import { CHECKOUT_STATUS } from '../../src/collections/checkout-session';
import { PAYMENT_STATUS } from '../../src/collections/payment';
import { FunctionSource, readFunctionSources } from '../../src/infra/database/function-sources';

const SRC = join(__dirname, '..', '..', 'src');

/** Each list of codes and the SQL function that answers it by name (src/collections/sql/<function>.sql). */
const FAMILIES: { fn: string; codes: Record<string, number> }[] = [
  { fn: 'payment_status_code', codes: PAYMENT_STATUS },
  { fn: 'checkout_status_code', codes: CHECKOUT_STATUS },
];

/** Status columns whose default a migration wrote as a number. */
const DEFAULTS = [
  { table: 'payments', column: 'payment_status', code: PAYMENT_STATUS.PENDING },
  { table: 'checkout_sessions', column: 'status', code: CHECKOUT_STATUS.UNPAID },
];

/** A status code written as a number (airtime 6xx, payments and payouts 7xx, checkout 8xx). */
const STATUS_NUMBER = /(?<![\w.$])([678]\d\d)(?![\w.])/g;
const SQL_WORDS = /\b(SELECT|UPDATE|INSERT|DELETE|WHERE)\b/;

/** SQL text without its comments, and its string literals emptied. */
function sqlCode(text: string): string {
  return text.replace(/--.*$/gm, '').replace(/'(?:[^']|'')*'/g, "''");
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/**
 * Payment and checkout status codes have one list each, in TypeScript (PAYMENT_STATUS, CHECKOUT_STATUS), and the SQL
 * writes them by name through one function per list (payment_status_code('SUCCESSFUL')), which Postgres folds into the
 * code when it plans. So a code changes in two places, the list and its function, held equal here; everywhere else
 * (SQL sources, the SQL TypeScript writes) a status is a name or an interpolated constant, never a number, and a
 * number written anywhere, or a name the list does not have, fails here.
 */
describe('payment and checkout status codes: one list each, which the SQL reads by name', () => {
  const sources = readFunctionSources();
  const isCodeFunction = (source: FunctionSource) => FAMILIES.some(({ fn }) => source.functions.includes(fn));
  /** The SQL sources but the code functions. */
  const readers = sources.filter((source) => !isCodeFunction(source));
  let db: Client;

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => db?.end());

  it.each(FAMILIES)('$fn answers its TypeScript list, name for name, and knows no other name', async ({ fn, codes }) => {
    for (const [name, code] of Object.entries(codes)) {
      const { rows } = await db.query(`SELECT ${fn}($1) AS code`, [name]);
      expect([name, rows[0].code]).toEqual([name, code]);
    }
    const source = sources.find((s) => s.functions.includes(fn))!;
    const names = [...source.text.matchAll(/WHEN '(\w+)' THEN/g)].map((m) => m[1]);
    expect(names.sort()).toEqual(Object.keys(codes).sort());
  });

  it('every call of a code function in the SQL sources names a status of its list, as a constant', () => {
    const calls = readers.flatMap(({ file, text }) =>
      FAMILIES.flatMap(({ fn, codes }) =>
        [...text.replace(/--.*$/gm, '').matchAll(new RegExp(`\\b${fn}\\s*\\(([^)]*)\\)`, 'g'))].map((call) => ({
          call: `${file}: ${call[0]}`,
          known: /^'\w+'$/.test(call[1]) && Object.hasOwn(codes, call[1].slice(1, -1)),
        })),
      ),
    );
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((c) => !c.known).map((c) => c.call)).toEqual([]);
  });

  it('no SQL source writes a status as a number but the code functions', () => {
    const numbers = readers.flatMap(({ file, text }) => [...sqlCode(text).matchAll(STATUS_NUMBER)].map((m) => `${file}: ${m[1]}`));
    expect(readers.length).toBeGreaterThan(0);
    expect(numbers).toEqual([]);
  });

  it('no SQL written in the TypeScript has a status as a number (statuses are interpolated constants)', () => {
    const numbers = tsFiles(SRC).flatMap((path) =>
      [...readFileSync(path, 'utf8').matchAll(/`(?:[^`\\]|\\.)*`|'(?:[^'\\\n]|\\.)*'/g)]
        .map((literal) => literal[0].replace(/\$\{[^}]*\}/g, ''))
        .filter((literal) => SQL_WORDS.test(literal))
        .flatMap((literal) => [...literal.matchAll(STATUS_NUMBER)].map((m) => `${relative(SRC, path)}: ${m[1]}`)),
    );
    expect(numbers).toEqual([]);
  });

  it("the status columns' defaults are the lists' first statuses", async () => {
    for (const { table, column, code } of DEFAULTS) {
      const { rows } = await db.query(
        `SELECT column_default FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 AND column_name = $2`,
        [table, column],
      );
      expect([table, Number(rows[0].column_default)]).toEqual([table, code]);
    }
  });
});
