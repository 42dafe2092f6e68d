import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DISTRIBUTION_PLAN } from '../../../src/infra/database/distribution-plan';

/**
 * The Citus rules of docs/scaling.md, checked on the migrated schema, so that no new table or money function drifts
 * away from the path that design lays out. Citus is not installed here: nothing is distributed; the test holds the
 * plain schema to what create_distributed_table and create_distributed_function would need.
 */

/** Every table of the schema, in exactly one class. A new table fails the test until it is placed there. */
const TABLES = DISTRIBUTION_PLAN;

/**
 * What distributed tables lack, by table: `<table>.client_id` for a missing (or nullable) column, else the name of
 * each unique key or foreign key (to another distributed table) that does not carry client_id. Migrations 039 and
 * 042 closed every gap; a new one fails the test until it is named here and in docs/scaling.md.
 */
const KNOWN_GAPS: Record<string, string[]> = {};

/**
 * Money functions with no client argument to delegate on: each takes items that may span clients, every statement
 * pinned client by client. docs/scaling.md names them.
 */
const MONEY_FUNCTIONS_WITHOUT_CLIENT = ['float_holds_resolve', 'ledger_post_entries'];

/** Where money is written: a function that does either, or calls one that does, moves money. */
const WRITES_MONEY = [/\bINSERT\s+INTO\s+postings\b/i, /\bUPDATE\s+ledger_accounts\b/i];

const SCALING_DOC = join(__dirname, '../../../docs/scaling.md');

/** The text of one `## ` section of docs/scaling.md, up to the next. */
function docSection(heading: string): string {
  const doc = readFileSync(SCALING_DOC, 'utf8');
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/scaling.md has no section "## ${heading}"`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** Names written in backticks in a piece of Markdown. */
const backticked = (markdown: string) => new Set([...markdown.matchAll(/`([^`]+)`/g)].map((m) => m[1]));

const classOf = (table: string) => Object.entries(TABLES).find(([, names]) => (names as readonly string[]).includes(table))?.[0];

describe('the schema keeps to the Citus path of docs/scaling.md', () => {
  let db: Client;

  beforeAll(async () => {
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => db.end());

  /** The schema's tables, outside any extension; a partition is its parent's (its keys and foreign keys are clones). */
  async function tables(): Promise<string[]> {
    const { rows } = await db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
        ORDER BY 1`,
    );
    return rows.map((r) => r.name);
  }

  /** What each distributed table lacks, named as in KNOWN_GAPS. */
  async function gaps(): Promise<Record<string, string[]>> {
    const distributed = [...TABLES.distributed];
    const hasClient = (rel: string, keys: string) =>
      `EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = ${rel} AND a.attnum = ANY (${keys}) AND a.attname = 'client_id')`;
    const { rows } = await db.query<{ table: string; gap: string }>(
      `SELECT c.relname AS table, c.relname || '.client_id' AS gap
         FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY ($1)
          AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                           WHERE a.attrelid = c.oid AND a.attname = 'client_id' AND a.attnotnull AND a.atttypid = 'uuid'::regtype)
       UNION ALL
       SELECT c.relname, ci.relname
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_class ci ON ci.oid = i.indexrelid
        WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY ($1) AND i.indisunique
          AND NOT ${hasClient('c.oid', 'i.indkey')}
       UNION ALL
       SELECT c.relname, k.conname
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
        WHERE k.contype = 'f' AND c.relnamespace = 'public'::regnamespace AND c.relname = ANY ($1) AND r.relname = ANY ($1)
          AND NOT (${hasClient('c.oid', 'k.conkey')} AND ${hasClient('r.oid', 'k.confkey')})`,
      [distributed],
    );
    const found: Record<string, string[]> = {};
    for (const row of rows) (found[row.table] ??= []).push(row.gap);
    return found;
  }

  it('classifies every table exactly once, and only tables that exist', async () => {
    const all = Object.values(TABLES).flat() as string[];
    expect(all.filter((name, i) => all.indexOf(name) !== i)).toEqual([]); // in two classes
    const live = await tables();
    expect(live.filter((name) => !all.includes(name))).toEqual([]); // unclassified: add it to TABLES
    expect(all.filter((name) => !live.includes(name))).toEqual([]); // classified but gone
  });

  it('gives every distributed table a client_id in its keys, but for the known gaps, each named in docs/scaling.md', async () => {
    const found = await gaps();
    const sortedGaps = (gapsByTable: Record<string, string[]>) =>
      Object.fromEntries(Object.entries(gapsByTable).map(([table, names]) => [table, [...names].sort()]));
    expect(sortedGaps(found)).toEqual(sortedGaps(KNOWN_GAPS));

    const named = backticked(docSection('What must change first'));
    const undocumented = Object.entries(KNOWN_GAPS)
      .flatMap(([table, names]) => [table, ...names])
      .filter((name) => !named.has(name));
    expect([...new Set(undocumented)]).toEqual([]);
  });

  it('lets no reference or local table point at a distributed one, nor a reference table at a local one', async () => {
    const { rows } = await db.query<{ name: string; from: string; to: string }>(
      `SELECT k.conname AS name, c.relname AS from, r.relname AS to
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
        WHERE k.contype = 'f' AND k.conparentid = 0 AND c.relnamespace = 'public'::regnamespace`,
    );
    const allowed: Record<string, string[]> = {
      distributed: ['distributed', 'reference'],
      reference: ['reference'],
      local: ['local', 'reference'],
    };
    const refused = rows.filter((fk) => !allowed[classOf(fk.from)!]?.includes(classOf(fk.to)!)).map((fk) => fk.name);
    expect(refused).toEqual([]);
  });

  it('gives every money function a client argument to delegate on, but for the named batches, each in docs/scaling.md', async () => {
    const { rows } = await db.query<{ name: string; args: string; body: string }>(
      `SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args, p.prosrc AS body
         FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f'
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`,
    );
    const bodies = rows.map((fn) => ({ ...fn, body: fn.body.replace(/--[^\n]*/g, '') }));
    // Those that write postings or balances, then whoever calls one of them, until no caller is new.
    const money = new Set(bodies.filter((fn) => WRITES_MONEY.some((pattern) => pattern.test(fn.body))).map((fn) => fn.name));
    for (let grew = true; grew;) {
      grew = false;
      for (const fn of bodies) {
        if (!money.has(fn.name) && [...money].some((callee) => new RegExp(`\\b${callee}\\s*\\(`).test(fn.body))) {
          money.add(fn.name);
          grew = true;
        }
      }
    }
    expect(money).toContain('ledger_post_entry'); // the criterion finds the posting core's callers

    const withoutClient = bodies
      .filter((fn) => money.has(fn.name) && !/(^|, )p_client_id uuid(,|$)/.test(fn.args))
      .map((fn) => fn.name)
      .sort();
    expect(withoutClient).toEqual(MONEY_FUNCTIONS_WITHOUT_CLIENT);

    const delegated = backticked(docSection('Money functions, delegated'));
    expect([...money].filter((name) => !delegated.has(name)).sort()).toEqual([]);
    const named = backticked(docSection('What must change first'));
    expect(MONEY_FUNCTIONS_WITHOUT_CLIENT.filter((name) => !named.has(name))).toEqual([]);
  });
});
