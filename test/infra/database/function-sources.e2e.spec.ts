import { Client } from 'pg';
import { createHash } from 'node:crypto';
import { applyFunctionSources, FunctionSource, inDependencyOrder, readFunctionSources } from '../../../src/infra/database/function-sources';
import { createIsolatedDatabase, IsolatedDatabase } from '../../support/gateway-fixtures';

const LIVE_FUNCTIONS = `
  SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition,
         p.xmin::text = pg_current_xact_id()::xid::text AS replaced
    FROM pg_proc p
   WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f'
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
   ORDER BY 1`;

type LiveFunction = { signature: string; definition: string; replaced: boolean };

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

describe('database functions are their source files', () => {
  it('every function of the migrated database has a source file, and is defined exactly as that file says', async () => {
    const db = await connect(process.env.DATABASE_URL!);
    try {
      await db.query('BEGIN');
      const before = (await db.query<LiveFunction>(LIVE_FUNCTIONS)).rows;
      for (const source of readFunctionSources()) await db.query(source.text);
      const after = (await db.query<LiveFunction>(LIVE_FUNCTIONS)).rows;
      await db.query('ROLLBACK');

      expect(before.length).toBeGreaterThan(0);
      expect(after.filter((fn) => !fn.replaced).map((fn) => fn.signature)).toEqual([]); // no source file
      expect(after.map((fn) => fn.signature)).toEqual(before.map((fn) => fn.signature)); // a file defines another one
      const differing = before.filter((fn, i) => fn.definition !== after[i].definition).map((fn) => fn.signature);
      expect(differing).toEqual([]);
    } finally {
      await db.end();
    }
  });

  it('orders sources callees first: a function is created after every function its file calls', () => {
    const sources = inDependencyOrder(readFunctionSources());
    const position = new Map(sources.flatMap((source, i) => source.functions.map((name) => [name, i] as const)));
    expect(position.get('ledger_post_entries')!).toBeLessThan(position.get('ledger_post_entry')!);
    expect(position.get('collection_accept_charge')!).toBeLessThan(position.get('collection_accept_charges')!);
    expect(position.get('checkout_result_payload')!).toBeLessThan(position.get('checkout_follow_payments')!);
  });
});

describe('applying function sources', () => {
  let database: IsolatedDatabase;
  let db: Client;
  const source = (file: string, text: string): FunctionSource => ({
    file,
    text,
    checksum: createHash('sha256').update(text).digest('hex'),
    functions: [...text.matchAll(/CREATE OR REPLACE FUNCTION (\w+)/g)].map((m) => m[1]),
  });
  const signatures = async (): Promise<string[]> =>
    (await db.query<LiveFunction>(LIVE_FUNCTIONS)).rows.map((fn) => fn.signature).filter((s) => s.startsWith('probe_'));

  beforeAll(async () => {
    database = await createIsolatedDatabase();
    db = await connect(database.url);
  });
  afterAll(async () => {
    await db.end();
    await database.drop();
  });

  it('applies a new file, skips it unchanged, re-creates it under a changed signature and drops it once removed', async () => {
    const real = readFunctionSources();
    const v1 = source(
      'probe/sql/probe_double.sql',
      `CREATE OR REPLACE FUNCTION probe_double(p int) RETURNS int LANGUAGE sql AS $$ SELECT 2 * p $$;`,
    );
    const caller = source(
      'probe/sql/probe_quadruple.sql',
      `CREATE OR REPLACE FUNCTION probe_quadruple(p int) RETURNS int LANGUAGE sql AS $$ SELECT probe_double(probe_double(p)) $$;`,
    );

    expect(await applyFunctionSources(db, [...real, caller, v1])).toEqual({
      applied: ['probe/sql/probe_double.sql', 'probe/sql/probe_quadruple.sql'],
      dropped: [],
    });
    expect((await db.query('SELECT probe_quadruple(3) AS v')).rows).toEqual([{ v: 12 }]);
    expect(await applyFunctionSources(db, [...real, caller, v1])).toEqual({ applied: [], dropped: [] });

    // Another argument type and return type: CREATE OR REPLACE alone would fail or leave the old one beside it.
    const v2 = source(
      'probe/sql/probe_double.sql',
      `CREATE OR REPLACE FUNCTION probe_double(p numeric) RETURNS numeric LANGUAGE sql AS $$ SELECT 2 * p $$;`,
    );
    expect((await applyFunctionSources(db, [...real, caller, v2])).applied).toEqual(['probe/sql/probe_double.sql']);
    expect(await signatures()).toEqual(['probe_double(numeric)', 'probe_quadruple(integer)']);
    expect((await db.query('SELECT probe_quadruple(3) AS v')).rows).toEqual([{ v: 12 }]);

    expect(await applyFunctionSources(db, real)).toEqual({
      applied: [],
      dropped: ['probe_double(numeric)', 'probe_quadruple(integer)'],
    });
    expect(await signatures()).toEqual([]);
    const { rows } = await db.query(`SELECT file FROM schema_function_sources WHERE file LIKE 'probe/%'`);
    expect(rows).toEqual([]);
  });

  it('re-applies the file of a function dropped or redefined by other means than its file', async () => {
    await db.query('DROP FUNCTION client_service_fee(uuid, uuid, numeric)');
    expect(await applyFunctionSources(db)).toEqual({ applied: ['client-services/sql/client_service_fee.sql'], dropped: [] });
    await db.query(`CREATE OR REPLACE FUNCTION ledger_reverse_entry(p_client_id uuid, p_entry_id bigint, p_kind text)
      RETURNS TABLE(entry_id bigint, account_id uuid, amount numeric, balance_before numeric, balance_after numeric)
      LANGUAGE sql AS $$ SELECT NULL::bigint, NULL::uuid, NULL::numeric, NULL::numeric, NULL::numeric $$`);
    expect(await applyFunctionSources(db)).toEqual({ applied: ['ledger/sql/ledger_reverse_entry.sql'], dropped: [] });
    expect(await applyFunctionSources(db)).toEqual({ applied: [], dropped: [] });
  });

  it('applies nothing when a file fails, and names the file', async () => {
    const broken = source(
      'probe/sql/probe_broken.sql',
      `CREATE OR REPLACE FUNCTION probe_broken() RETURNS int LANGUAGE sql AS $$ SELECT no_such_column FROM clients $$;`,
    );
    const good = source('probe/sql/probe_good.sql', `CREATE OR REPLACE FUNCTION probe_good() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;`);
    await expect(applyFunctionSources(db, [...readFunctionSources(), good, broken])).rejects.toThrow(
      /probe\/sql\/probe_broken\.sql: .*no_such_column/,
    );
    expect(await signatures()).toEqual([]);
  });
});
