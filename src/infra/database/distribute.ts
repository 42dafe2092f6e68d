import { escapeIdentifier, type PoolClient } from 'pg';
import { DISTRIBUTION_ARGUMENT, DISTRIBUTION_PLAN } from './distribution-plan';

/** The database is no Citus coordinator: nothing was changed. */
export class NotCitus extends Error {}

/** A step Citus refused: the whole plan was rolled back. */
export class DistributionRefused extends Error {
  constructor(
    readonly step: string,
    cause: Error & { detail?: string },
  ) {
    super(`${step}: ${cause.message}${cause.detail ? ` (${cause.detail})` : ''}; nothing was changed`);
  }
}

export interface DistributionSummary {
  citus: string;
  workers: number;
  reference_tables: string[];
  distributed_tables: string[];
  /** Tables of the plan that were placed before this run (their partitions go with them). */
  already_distributed: string[];
  /** Functions delegated to the node of their first `p_client_id` argument. */
  functions: string[];
  /** Other functions copied to the workers: those Citus did not copy when they were made (a table's row type). */
  functions_copied: string[];
  foreign_keys_restored: number;
  /** Triggers dropped from tables being distributed (Citus refuses a table with triggers): the outbox's NOTIFY. */
  triggers_dropped: string[];
}

/** The table every distributed table is co-located with: accounts are what every money row points at. */
const COLOCATION_ANCHOR = 'ledger_accounts';

/**
 * Puts the schema on a Citus cluster, as docs/scaling.md lays out, in one transaction: foreign keys are dropped (Citus
 * refuses to distribute a table while a key ties it to one not yet distributed) and re-added at the end; the
 * reference tables are copied to every node; the distributed tables are hash-distributed by client_id, co-located
 * with ledger_accounts, once their triggers are dropped (Citus refuses a table with triggers; the outbox's NOTIFY
 * would fire on the workers anyway, and its source file makes it no more once the outbox is distributed); the
 * functions taking `p_client_id` are delegated on it. Run again, it does only what is left.
 */
export async function distribute(db: PoolClient): Promise<DistributionSummary> {
  const [citus] = (await db.query<{ version: string }>(`SELECT extversion AS version FROM pg_extension WHERE extname = 'citus'`)).rows;
  if (!citus) {
    throw new NotCitus(
      'this database is not a Citus coordinator (no citus extension): run CREATE EXTENSION citus and add the worker nodes first',
    );
  }
  const [{ workers }] = (
    await db.query<{ workers: number }>(`SELECT count(*)::int AS workers FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0`)
  ).rows;
  const placed = new Set(
    (await db.query<{ name: string }>(`SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition`)).rows.map((r) => r.name),
  );
  const planned: string[] = [...DISTRIBUTION_PLAN.reference, ...DISTRIBUTION_PLAN.distributed];
  const reference = DISTRIBUTION_PLAN.reference.filter((t) => !placed.has(t));
  const ordered = [COLOCATION_ANCHOR, ...DISTRIBUTION_PLAN.distributed.filter((t) => t !== COLOCATION_ANCHOR)];
  const distributed = ordered.filter((t) => !placed.has(t));
  const functions = (
    await db.query<{ signature: string; position: number }>(
      `SELECT p.oid::regprocedure::text AS signature, array_position(p.proargnames, $1) AS position
         FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND $1 = ANY (p.proargnames)
          AND NOT EXISTS (SELECT 1 FROM pg_dist_object o
                           WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid AND o.distribution_argument_index IS NOT NULL)
        ORDER BY 1`,
      [DISTRIBUTION_ARGUMENT],
    )
  ).rows;
  // Called by delegated functions on the workers, so they must be there too.
  const copied = (
    await db.query<{ signature: string }>(
      `SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f' AND NOT ($1 = ANY (coalesce(p.proargnames, '{}')))
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
          AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)
        ORDER BY 1`,
      [DISTRIBUTION_ARGUMENT],
    )
  ).rows.map((r) => r.signature);

  let step = 'begin';
  const run = async (name: string, sql: string, values: unknown[] = []) => {
    step = name;
    await db.query(sql, values);
  };
  await db.query('BEGIN');
  try {
    // Citus creates shards over several connections unless told to stay on one: needed inside a transaction block.
    await run('sequential mode', `SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`);
    const keys =
      reference.length + distributed.length === 0
        ? []
        : (
            await db.query<{ table: string; name: string; definition: string }>(
              `SELECT k.conrelid::regclass::text AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS definition
                 FROM pg_constraint k
                WHERE k.contype = 'f' AND k.connamespace = 'public'::regnamespace AND k.conparentid = 0
                ORDER BY 1, 2`,
            )
          ).rows;
    for (const key of keys) await run(`drop ${key.name}`, `ALTER TABLE ${key.table} DROP CONSTRAINT ${escapeIdentifier(key.name)}`);
    const triggers = (
      await db.query<{ table: string; name: string }>(
        `SELECT t.tgrelid::regclass::text AS table, t.tgname AS name FROM pg_trigger t
          WHERE NOT t.tgisinternal AND t.tgrelid = ANY (SELECT to_regclass(n) FROM unnest($1::text[]) n)
          ORDER BY 1, 2`,
        [distributed],
      )
    ).rows;
    for (const trigger of triggers)
      await run(`drop trigger ${trigger.name}`, `DROP TRIGGER ${escapeIdentifier(trigger.name)} ON ${trigger.table}`);
    for (const table of reference) await run(`reference table ${table}`, `SELECT create_reference_table($1)`, [table]);
    for (const table of distributed) {
      const colocateWith = table === COLOCATION_ANCHOR ? 'default' : COLOCATION_ANCHOR;
      await run(`distributed table ${table}`, `SELECT create_distributed_table($1, 'client_id', colocate_with => $2)`, [
        table,
        colocateWith,
      ]);
    }
    for (const key of keys)
      await run(`restore ${key.name}`, `ALTER TABLE ${key.table} ADD CONSTRAINT ${escapeIdentifier(key.name)} ${key.definition}`);
    for (const fn of functions) {
      await run(`function ${fn.signature}`, `SELECT create_distributed_function($1, $2, colocate_with => $3)`, [
        fn.signature,
        `$${fn.position}`,
        COLOCATION_ANCHOR,
      ]);
    }
    for (const signature of copied) await run(`function ${signature}`, `SELECT create_distributed_function($1)`, [signature]);
    await db.query('COMMIT');
    return {
      citus: citus.version,
      workers,
      reference_tables: reference,
      distributed_tables: distributed,
      already_distributed: [...placed].filter((t) => planned.includes(t)).sort(),
      functions: functions.map((f) => f.signature),
      functions_copied: copied,
      foreign_keys_restored: keys.length,
      triggers_dropped: triggers.map((t) => `${t.table}.${t.name}`),
    };
  } catch (error) {
    await db.query('ROLLBACK');
    throw new DistributionRefused(step, error as Error);
  }
}
