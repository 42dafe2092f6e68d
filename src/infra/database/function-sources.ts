import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { ClientBase } from 'pg';

/**
 * Database functions are source files: one `CREATE OR REPLACE FUNCTION` file per function in a `sql/` folder beside
 * its domain (`src/<domain>/sql/<function>.sql`, copied to the same place under dist/ by the build). They are applied
 * after the versioned migrations, like Flyway's repeatable migrations: a file runs again only when its checksum
 * changed, and what it defined before is dropped first, so a changed signature or return type drops and re-creates.
 * Every other function of the schema (not an extension's) is dropped: the files are the whole truth of what the
 * database runs.
 */
export interface FunctionSource {
  /** Path under the source root, with `/` separators: `ledger/sql/ledger_post_entries.sql`. */
  file: string;
  text: string;
  checksum: string;
  /** Names of the functions the file defines. */
  functions: string[];
}

export interface FunctionSourcesApplied {
  applied: string[];
  dropped: string[];
}

/** The compiled `src/` (dist/src in a build, src under ts-jest): the sql folders sit beside their domains in both. */
export const FUNCTION_SOURCES_ROOT = join(__dirname, '..', '..');

/** One lock key for every process applying sources, so two migrators never interleave. */
const APPLY_LOCK_KEY = 4_201_017;
const DEFINES = /\bCREATE\s+OR\s+REPLACE\s+FUNCTION\s+([a-z_][a-z0-9_]*)\s*\(/gi;

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sqlFiles(path);
    return entry.name.endsWith('.sql') && dir.endsWith(`${sep}sql`) ? [path] : [];
  });
}

/** Reads every function source under `root`. */
export function readFunctionSources(root: string = FUNCTION_SOURCES_ROOT): FunctionSource[] {
  return sqlFiles(root)
    .map((path) => {
      const text = readFileSync(path, 'utf8');
      const file = relative(root, path).split(sep).join('/');
      const functions = [...text.matchAll(DEFINES)].map((m) => m[1].toLowerCase());
      if (functions.length === 0) throw new Error(`${file} defines no function (CREATE OR REPLACE FUNCTION name(...))`);
      return { file, text, functions, checksum: createHash('sha256').update(text).digest('hex') };
    })
    .sort((a, b) => (a.file < b.file ? -1 : 1));
}

/** The sources in the order they are applied: a file after the files whose functions it calls. */
export function inDependencyOrder(sources: FunctionSource[]): FunctionSource[] {
  const definedBy = new Map<string, FunctionSource>();
  for (const source of sources) {
    for (const name of source.functions) {
      const other = definedBy.get(name);
      if (other) throw new Error(`function ${name} is defined by both ${other.file} and ${source.file}`);
      definedBy.set(name, source);
    }
  }
  return dependencyOrder(sources, definedBy);
}

/**
 * Callees before callers. Only a `LANGUAGE sql` body is checked against the functions it calls when it is created
 * (plpgsql is resolved when it runs), so a cycle, which only plpgsql can form, is cut where it closes.
 */
function dependencyOrder(sources: FunctionSource[], definedBy: Map<string, FunctionSource>): FunctionSource[] {
  const ordered: FunctionSource[] = [];
  const seen = new Set<FunctionSource>();
  const visit = (source: FunctionSource): void => {
    if (seen.has(source)) return;
    seen.add(source);
    const code = source.text.replace(/--.*$/gm, '');
    for (const [name, dependency] of definedBy) {
      if (dependency !== source && new RegExp(`\\b${name}\\b`, 'i').test(code)) visit(dependency);
    }
    ordered.push(source);
  };
  for (const source of sources) visit(source);
  return ordered;
}

/** What the database runs for a file's functions, as one checksum: every signature and definition of those names. */
function definitionsChecksum(functions: { name: string; signature: string; definition: string }[], names: string[]): string {
  const hash = createHash('sha256');
  for (const fn of functions) if (names.includes(fn.name)) hash.update(`${fn.signature}\n${fn.definition}\n`);
  return hash.digest('hex');
}

/**
 * Brings the database's functions to the sources, in one transaction: changed and new files are applied (their
 * functions dropped first, under every signature), functions no file defines are dropped, and each file's checksum
 * and the checksum of what it made are recorded in `schema_function_sources` (migration FunctionSources).
 */
export async function applyFunctionSources(
  client: ClientBase,
  unordered: FunctionSource[] = readFunctionSources(),
): Promise<FunctionSourcesApplied> {
  const sources = inDependencyOrder(unordered);
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [APPLY_LOCK_KEY]);
    const { rows: recorded } = await client.query<{ file: string; checksum: string; functions: string[]; definitions: string }>(
      'SELECT file, checksum, functions, definitions FROM schema_function_sources',
    );
    const recordedByFile = new Map(recorded.map((row) => [row.file, row]));
    const { rows: existing } = await client.query<{ name: string; signature: string; definition: string; trigger: boolean }>(
      `SELECT p.proname AS name, p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition,
              p.prorettype = 'trigger'::regtype AS trigger
         FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f'
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
        ORDER BY 2`,
    );
    // A file runs again when it changed, or when what the database runs is no longer what the file made (a function
    // dropped or redefined by hand or by a migration).
    const changed = sources.filter((source) => {
      const record = recordedByFile.get(source.file);
      return record?.checksum !== source.checksum || record.definitions !== definitionsChecksum(existing, source.functions);
    });
    const defined = new Set(sources.flatMap((source) => source.functions));
    const replaced = new Set(changed.flatMap((source) => [...source.functions, ...(recordedByFile.get(source.file)?.functions ?? [])]));
    const dropped: string[] = [];
    for (const fn of existing) {
      if (defined.has(fn.name) && !replaced.has(fn.name)) continue;
      // A trigger function's file makes its trigger too, so the trigger goes with the function.
      await client.query(`DROP FUNCTION ${fn.signature}${fn.trigger ? ' CASCADE' : ''}`);
      if (!defined.has(fn.name)) dropped.push(fn.signature);
    }
    for (const source of changed) {
      try {
        await client.query(source.text);
      } catch (error) {
        throw Object.assign(error as Error, { message: `${source.file}: ${(error as Error).message}` });
      }
    }
    await client.query('DELETE FROM schema_function_sources WHERE NOT (file = ANY ($1))', [sources.map((s) => s.file)]);
    if (changed.length > 0) {
      const { rows: made } = await client.query<{ name: string; signature: string; definition: string }>(
        `SELECT p.proname AS name, p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition
           FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname = ANY ($1) ORDER BY 2`,
        [changed.flatMap((source) => source.functions)],
      );
      for (const source of changed) {
        await client.query(
          `INSERT INTO schema_function_sources (file, checksum, functions, definitions) VALUES ($1, $2, $3, $4)
           ON CONFLICT (file) DO UPDATE
             SET checksum = excluded.checksum, functions = excluded.functions, definitions = excluded.definitions, applied_at = now()`,
          [source.file, source.checksum, source.functions, definitionsChecksum(made, source.functions)],
        );
      }
    }
    await client.query('COMMIT');
    return { applied: changed.map((source) => source.file), dropped };
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
