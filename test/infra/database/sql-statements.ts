import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';
import { readFunctionSources } from '../../../src/infra/database/function-sources';

// libpg-query is Postgres's own parser compiled to WebAssembly: the statements are read as the server reads them.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pg = require('libpg-query') as {
  loadModule(): Promise<void>;
  parseSync(sql: string): { stmts: { stmt: Node }[] };
  parsePlPgSQLSync(sql: string): { plpgsql_funcs: unknown[] };
};

/** A node of a parse tree, walked generically. */
type Node = any;

/** One SQL statement of the code base, with where it is written. */
export interface SqlStatement {
  /** `<file>:<Class.method>` for a query written in TypeScript; `<file>#<function>` for a statement of a SQL function. */
  origin: string;
  /** The function it belongs to, for a statement of a SQL function. */
  fn?: string;
  sql: string;
  ast: Node;
}

export interface SqlFunction {
  name: string;
  file: string;
  language: string;
  /** IMMUTABLE, STABLE or VOLATILE (Postgres's default), in lower case. */
  volatility: string;
  parameters: string[];
  statements: SqlStatement[];
  /** Statements run with EXECUTE: built at run time, not read here. */
  dynamic: number;
  /** Why the body could not be read without the catalog (PL/pgSQL assigning a field of a composite variable). */
  unread?: string;
}

export const loadParser = () => pg.loadModule();

/** One statement written in a test, as if in a SQL function `fn` when given. */
export const madeStatement = (sql: string, fn?: string): SqlStatement => ({
  origin: 'made',
  fn,
  sql,
  ast: pg.parseSync(sql).stmts[0].stmt,
});

/**
 * Visits every node of a parse tree, depth first; `enter` answers 'skip' to leave a node's children out (a subquery,
 * which is a level of its own).
 */
function walk(tree: Node, enter: (node: Node) => 'skip' | void): void {
  if (Array.isArray(tree)) return tree.forEach((item) => walk(item, enter));
  if (!tree || typeof tree !== 'object' || enter(tree) === 'skip') return;
  for (const child of Object.values(tree)) walk(child, enter);
}

/** The queries a PL/pgSQL body runs, each as a statement (an expression or assignment is read as `SELECT <expression>`). */
function plpgsqlQueries(tree: unknown): string[] {
  const found: string[] = [];
  walk(tree, (node) => {
    if (!node.PLpgSQL_expr) return;
    const { query, parseMode } = node.PLpgSQL_expr;
    // Modes: 0 a statement, 2 an expression, 3-5 an assignment `target := expression`.
    const expression = parseMode >= 3 ? query.replace(/^[^:=]*:?=/, '') : query;
    found.push(parseMode === 0 ? query : `SELECT ${expression}`);
  });
  return found;
}

const optionValue = (options: Node[], name: string) => options.find((o) => o.DefElem?.defname === name)?.DefElem?.arg;

/** Every function of src/<domain>/sql/, with each statement it runs parsed (a trigger function's file makes its trigger too). */
export function sqlFunctions(): SqlFunction[] {
  return readFunctionSources().flatMap((source) =>
    pg
      .parseSync(source.text)
      .stmts.filter(({ stmt }) => stmt.CreateFunctionStmt)
      .map(({ stmt }) => {
        const create = stmt.CreateFunctionStmt;
        const name = create.funcname.at(-1).String.sval as string;
        const language = optionValue(create.options, 'language').String.sval as string;
        const volatility = (optionValue(create.options, 'volatility')?.String.sval as string | undefined) ?? 'volatile';
        const parameters = (create.parameters ?? [])
          .filter((p: Node) => p.FunctionParameter.mode !== 'FUNC_PARAM_OUT' && p.FunctionParameter.mode !== 'FUNC_PARAM_TABLE')
          .map((p: Node) => p.FunctionParameter.name as string);
        const body = (optionValue(create.options, 'as').List.items[0].String.sval as string) ?? '';
        let texts = [body];
        let unread: string | undefined;
        if (language === 'plpgsql') {
          try {
            texts = plpgsqlQueries(pg.parsePlPgSQLSync(source.text));
          } catch (error) {
            texts = [];
            unread = (error as Error).message;
          }
        }
        const statements = texts
          .flatMap((sql) => pg.parseSync(sql).stmts.map(({ stmt: ast }) => executedText(ast) ?? { sql, ast }))
          .map(({ sql, ast }) => ({ origin: `${source.file}#${name}`, fn: name, sql, ast }));
        return {
          name,
          file: source.file,
          language,
          volatility,
          parameters,
          statements,
          dynamic: (body.match(/\bEXECUTE\b/gi) ?? []).length,
          unread,
        };
      }),
  );
}

/** `EXECUTE $sql$ … $sql$`, which the body reads as the expression `SELECT '<text>'`: the statement in the text. */
function executedText(ast: Node): { sql: string; ast: Node } | undefined {
  const targets = ast.SelectStmt?.targetList;
  const text = targets?.length === 1 && !ast.SelectStmt.fromClause ? targets[0].ResTarget.val?.A_Const?.sval?.sval : undefined;
  if (typeof text !== 'string' || !QUERY_START.test(text)) return undefined;
  return { sql: text, ast: pg.parseSync(text).stmts[0].stmt };
}

const SRC = join(__dirname, '../../../src');
const QUERY_START = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\s/; // the code base writes SQL keywords in capitals

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The class member or function a query is written in (`Class.method`), stable while lines move. */
function enclosingName(node: ts.Node): string {
  const names: string[] = [];
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    const named = at as ts.Node & { name?: ts.Node };
    if (
      (ts.isFunctionDeclaration(at) ||
        ts.isMethodDeclaration(at) ||
        ts.isClassDeclaration(at) ||
        ts.isVariableDeclaration(at) ||
        ts.isPropertyDeclaration(at) ||
        ts.isPropertyAssignment(at)) &&
      named.name &&
      ts.isIdentifier(named.name)
    ) {
      names.unshift(named.name.text);
    }
  }
  return names.join('.') || '(module)';
}

/** The variables a file declares with a value, by name. */
function declaredIn(source: ts.SourceFile): Map<string, ts.Expression> {
  const found = new Map<string, ts.Expression>();
  const collect = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) found.set(node.name.text, node.initializer);
    ts.forEachChild(node, collect);
  };
  collect(source);
  return found;
}

/**
 * Every SQL text written in src/*.ts. A template's `${…}` is replaced by the text of the constant it names (one of
 * the same file, else the one constant of that name in src/, as an import would find it), else by a parameter; a
 * text that still does not parse (a fragment spliced at run time) is returned in `unread` with its origin.
 */
export function repositoryQueries(): { statements: SqlStatement[]; unread: string[] } {
  const statements: SqlStatement[] = [];
  const unread: string[] = [];
  const sources = tsFiles(SRC).map((path) => ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true));
  const everywhere = new Map<string, ts.Expression[]>();
  for (const source of sources)
    for (const [name, value] of declaredIn(source)) everywhere.set(name, [...(everywhere.get(name) ?? []), value]);
  for (const source of sources) {
    const file = relative(join(SRC, '..'), source.fileName);
    const own = declaredIn(source);
    const constantNamed = (name: string) => own.get(name) ?? (everywhere.get(name)?.length === 1 ? everywhere.get(name)![0] : undefined);
    // A span that names no constant becomes a parameter, or, on a second reading, nothing: most are an
    // optional clause (`FOR UPDATE`, an extra filter), read here as absent.
    const textOf = (node: ts.Expression, spliced: 'parameter' | 'nothing', depth = 0): string | undefined => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
      if (!ts.isTemplateExpression(node)) return undefined;
      let parameter = 900;
      return (
        node.head.text +
        node.templateSpans
          .map((span) => {
            const named = ts.isIdentifier(span.expression) && depth < 3 ? constantNamed(span.expression.text) : undefined;
            const inlined = named ? textOf(named, spliced, depth + 1) : undefined;
            return (inlined ?? (spliced === 'parameter' ? `$${parameter++}` : '')) + span.literal.text;
          })
          .join('')
      );
    };
    const parsed = (node: ts.Expression): { sql: string; stmts: { stmt: Node }[] } | undefined => {
      for (const spliced of ['parameter', 'nothing'] as const) {
        const sql = textOf(node, spliced)!;
        try {
          return { sql, stmts: pg.parseSync(sql).stmts };
        } catch {
          // read again with the spans left out
        }
      }
      return undefined;
    };
    const visit = (node: ts.Node) => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
        const sql = textOf(node, 'parameter');
        if (sql !== undefined && QUERY_START.test(sql)) {
          const origin = `${file}:${enclosingName(node)}`;
          const read = parsed(node);
          if (read) for (const { stmt: ast } of read.stmts) statements.push({ origin, sql: read.sql, ast });
          else unread.push(origin);
        }
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { statements, unread };
}

/** Functions that are not IMMUTABLE, which Citus refuses in an upsert's DO UPDATE SET (use EXCLUDED's value). */
const VOLATILE = ['clock_timestamp', 'random', 'gen_random_uuid', 'nextval'];
const NOT_IMMUTABLE = ['now', 'statement_timestamp', 'transaction_timestamp', ...VOLATILE];

/** The code base's own functions by name: their volatility (VOLATILE, Postgres's default, when not declared) and language. */
export type OwnFunctions = ReadonlyMap<string, Pick<SqlFunction, 'volatility' | 'language'>>;

function changesWithTheClock(set: Node, own: OwnFunctions = new Map()): boolean {
  let found = false;
  walk(set, (node) => {
    const name = node.FuncCall?.funcname?.at(-1)?.String?.sval;
    const declared = name ? own.get(name)?.volatility : undefined;
    if (node.SQLValueFunction || (name && (NOT_IMMUTABLE.includes(name) || (declared !== undefined && declared !== 'immutable'))))
      found = true;
  });
  return found;
}

function writesOrLocks(ast: Node): boolean {
  return levels(ast).some((level) => level.kind !== 'SelectStmt' || (level.lockingClause ?? []).length > 0);
}

/** A relation named in a statement level, with the name its columns are qualified by. */
interface Relation {
  table: string;
  alias: string;
}

/** The SELECT / INSERT / UPDATE / DELETE levels of a statement: each subquery and CTE is a level of its own. */
function levels(ast: Node): Node[] {
  const found: Node[] = [];
  walk(ast, (node) => {
    for (const kind of ['SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt']) if (node[kind]) found.push({ kind, ...node[kind] });
  });
  return found;
}

/** Every table a statement reads or writes, at any level. */
export const tablesIn = (statement: SqlStatement): string[] => [
  ...new Set(levels(statement.ast).flatMap((level) => relationsOf(level).map((r) => r.table))),
];

/** The relations a level reads or writes itself (not those of its subqueries). */
function relationsOf(level: Node): Relation[] {
  const found: Relation[] = [];
  const add = (range: Node) => found.push({ table: range.relname, alias: range.alias?.aliasname ?? range.relname });
  // UPDATE and DELETE name their target as a bare RangeVar body.
  if (level.relation) add(level.relation);
  walk([level.fromClause, level.usingClause], (node) => {
    if (node.RangeVar) add(node.RangeVar);
    if (node.RangeVar || node.RangeSubselect || node.SubLink || node.RangeFunction) return 'skip';
  });
  return found;
}

/** The join conditions and filters of a level, not descending into subqueries. */
function qualsOf(level: Node): Node[] {
  const quals: Node[] = [level.whereClause];
  walk(level.fromClause, (node) => {
    if (node.RangeSubselect || node.SubLink) return 'skip';
    if (!node.JoinExpr) return;
    quals.push(node.JoinExpr.quals);
    // JOIN … USING (client_id) equates the column of both sides.
    if ((node.JoinExpr.usingClause ?? []).some((using: Node) => using.String?.sval === 'client_id')) quals.push({ usingClientId: true });
  });
  return quals;
}

/** The columns a level names itself (its subqueries are levels of their own). */
function ownColumns(level: Node): string[][] {
  const found: string[][] = [];
  walk([level.whereClause, level.targetList, level.fromClause], (node) => {
    if (node.SubLink || node.RangeSubselect) return 'skip';
    const column = columnOf(node);
    if (column) found.push(column);
  });
  return found;
}

/** Every column reference in a tree, as its name parts. */
function columnsIn(tree: Node): string[][] {
  const found: string[][] = [];
  walk(tree, (node) => {
    const column = columnOf(node);
    if (column) found.push(column);
  });
  return found;
}

const columnOf = (node: Node): string[] | undefined =>
  node?.ColumnRef ? node.ColumnRef.fields.map((f: Node) => f.String?.sval ?? '*') : undefined;

/** `x.client_id = <something>` found in the quals, each as [qualifier or '', the other side's column or undefined]. */
function clientIdEqualities(quals: Node[]): { left?: string; right?: string[]; using?: boolean }[] {
  const found: { left?: string; right?: string[]; using?: boolean }[] = [];
  walk(quals, (node) => {
    if (node.usingClientId) found.push({ using: true });
    if (node.SubLink || node.RangeSubselect) return 'skip';
    const expr = node.A_Expr;
    if (!expr || expr.kind !== 'AEXPR_OP' || expr.name?.[0]?.String?.sval !== '=') return;
    for (const [a, b] of [
      [expr.lexpr, expr.rexpr],
      [expr.rexpr, expr.lexpr],
    ]) {
      const column = columnOf(a);
      if (column && column.at(-1) === 'client_id') found.push({ left: column.length > 1 ? column.at(-2) : '', right: columnOf(b) });
    }
  });
  return found;
}

export interface StatementFinding {
  origin: string;
  table: string;
  rule:
    | 'no-client-id-filter'
    | 'join-not-on-client-id'
    | 'insert-without-client-id'
    | 'reference-correlates-into-distributed'
    | 'clock-in-upsert'
    | 'clock-in-conditional-update'
    | 'volatile-in-update'
    | 'function-in-shard-query'
    | 'case-in-simple-case';
  // reference-correlates-into-distributed: a reference or coordinator table correlated into a distributed one.
  // clock-in-conditional-update: an UPDATE whose SET or WHERE has a CASE or COALESCE calling a function that is not
  // IMMUTABLE ("non-IMMUTABLE functions are not allowed in CASE or COALESCE statements"); volatile-in-update: a
  // VOLATILE function in an UPDATE's SET ("functions used in UPDATE queries on distributed tables must not be VOLATILE").
  // function-in-shard-query: `table` is a function that reads distributed tables, called by a level that reads one
  // (Citus runs it inside the query on the shard, and refuses its queries: "cannot execute a distributed query from
  // a query on a shard").
  // case-in-simple-case: `CASE x WHEN … THEN CASE WHEN … END` in a statement on a shard (also with a LANGUAGE sql
  // function of ours in a result, which may be inlined as a CASE): Citus 13.2 sends it to the shard as a comparison of
  // x with an inner WHEN ("operator does not exist: text = boolean"); write the outer CASE searched.
}

/** The functions called by name anywhere in a statement. */
export function functionsCalledBy(statement: SqlStatement): string[] {
  const found = new Set<string>();
  walk(statement.ast, (node) => {
    const name = node.FuncCall?.funcname?.at(-1)?.String?.sval;
    if (name) found.add(name);
  });
  return [...found];
}

/**
 * What keeps a statement off one shard group (or, for a read across clients, off co-located joins): a distributed
 * its client_id (to a value, or to the client_id of another table of the level that has one), an INSERT into a
 * distributed table without client_id, or a reference table at a level whose subquery reads a distributed table.
 */
export function findings(
  statement: SqlStatement,
  plan: { distributed: readonly string[]; reference: readonly string[]; local: readonly string[] },
  shardFunctions: ReadonlySet<string> = new Set(),
  own: OwnFunctions = new Map(),
): StatementFinding[] {
  const { distributed, reference } = plan;
  // Tables off the shards: copied to every node (reference) or kept on the coordinator (local).
  const offShards = [...plan.reference, ...plan.local];
  const out: StatementFinding[] = [];
  // A write, a locking read, or any statement of a SQL function (delegated to its client's node) must stay on one
  // shard; a plain read in TypeScript may span clients (metrics, invariants, start-up), joining on client_id.
  const strict = statement.fn !== undefined || writesOrLocks(statement.ast);
  // A statement that reads a shard anywhere (a subquery, a CTE, a function's argument) is planned by Citus as one
  // router query and run on the shard whole, with every function it calls.
  if (tablesIn(statement).some((t) => distributed.includes(t))) {
    for (const name of functionsCalledBy(statement).filter((f) => shardFunctions.has(f))) {
      out.push({ origin: statement.origin, table: name, rule: 'function-in-shard-query' });
    }
  }
  if (tablesIn(statement).some((t) => distributed.includes(t))) {
    walk(statement.ast, (node) => {
      const simple = node.CaseExpr?.arg ? node.CaseExpr : undefined;
      if (!simple) return;
      let nested = false;
      walk([simple.args.map((w: Node) => w.CaseWhen.result), simple.defresult], (inner) => {
        // A LANGUAGE sql function of ours may be inlined, its body (a CASE, for the status codes) with it.
        const name = inner.FuncCall?.funcname?.at(-1)?.String?.sval;
        if (inner.CaseExpr || (name && own.get(name)?.language === 'sql')) nested = true;
      });
      if (nested)
        out.push({
          origin: statement.origin,
          table: tablesIn(statement).find((t) => distributed.includes(t))!,
          rule: 'case-in-simple-case',
        });
    });
  }
  for (const level of levels(statement.ast)) {
    if (level.kind === 'UpdateStmt' && [...distributed, ...reference].includes(level.relation.relname)) {
      const table = level.relation.relname as string;
      // The whole statement: Postgres pulls a subquery or CTE the SET reads from up into the UPDATE before Citus checks
      // it (a CASE over a VOLATILE function in a CTE, seen on Citus 13.2.2).
      walk(statement.ast, (node) => {
        if ((node.CaseExpr || node.CoalesceExpr) && changesWithTheClock(node, own)) {
          out.push({ origin: statement.origin, table, rule: 'clock-in-conditional-update' });
          return 'skip';
        }
      });
      walk(level.targetList, (node) => {
        const name = node.FuncCall?.funcname?.at(-1)?.String?.sval;
        if (name && (VOLATILE.includes(name) || own.get(name)?.volatility === 'volatile'))
          out.push({ origin: statement.origin, table, rule: 'volatile-in-update' });
      });
    }
    if (level.kind === 'InsertStmt') {
      const table = level.relation.relname as string;
      if ((distributed.includes(table) || reference.includes(table)) && changesWithTheClock(level.onConflictClause?.targetList)) {
        out.push({ origin: statement.origin, table, rule: 'clock-in-upsert' });
      }
      const columns = (level.cols ?? []).map((c: Node) => c.ResTarget.name as string);
      if (distributed.includes(table) && !columns.includes('client_id')) {
        out.push({ origin: statement.origin, table, rule: 'insert-without-client-id' });
      }
      continue;
    }
    const relations = relationsOf(level);
    const onShard = relations.filter((r) => distributed.includes(r.table));
    const equalities = clientIdEqualities(qualsOf(level));
    const aliases = new Set(relations.map((r) => r.alias));
    const sameLevel = (column?: string[]) =>
      column !== undefined && column.at(-1) === 'client_id' && (column.length === 1 || aliases.has(column.at(-2)!));
    // Relations whose client_id equal each other's are one group; a group is pinned when one of its client_ids equals
    // something else (a parameter, a variable, an outer query's column).
    const group = new Map(onShard.map((r) => [r.alias, r.alias]));
    const root = (alias: string): string => (group.get(alias) === alias ? alias : root(group.get(alias)!));
    const join = (a: string, b: string) => group.has(a) && group.has(b) && group.set(root(a), root(b));
    const pinned = new Set<string>();
    for (const e of equalities) {
      if (e.using) onShard.forEach((r) => join(r.alias, onShard[0].alias));
      else if (sameLevel(e.right)) join(e.left || onShard[0]?.alias, e.right!.length === 2 ? e.right![0] : onShard[0]?.alias);
      else if (e.left === '') onShard.forEach((r) => pinned.add(r.alias));
      else pinned.add(e.left!);
    }
    const pinnedGroups = new Set([...pinned].filter((a) => group.has(a)).map(root));
    const correlated = ownColumns(level).some((c) => c.length > 1 && !aliases.has(c.at(-2)!));
    const groups = new Set(onShard.map((r) => root(r.alias)));
    for (const r of onShard) {
      if (strict && !pinnedGroups.has(root(r.alias))) out.push({ origin: statement.origin, table: r.table, rule: 'no-client-id-filter' });
      // A subquery correlated to an outer query is a join with it: Citus wants that on client_id too.
      else if (!strict && (groups.size > 1 || (correlated && !pinnedGroups.has(root(r.alias)))))
        out.push({ origin: statement.origin, table: r.table, rule: 'join-not-on-client-id' });
    }

    const referenced = relations.filter((r) => offShards.includes(r.table));
    if (referenced.length > 0) {
      const sublinks: Node[] = [];
      walk([level.whereClause, level.targetList], (node) => {
        if (!node.SubLink) return;
        sublinks.push(node.SubLink.subselect);
        return 'skip';
      });
      const outer = new Set(referenced.map((r) => r.alias));
      for (const sub of sublinks) {
        const inner = levels(sub).flatMap(relationsOf);
        const own = new Set(inner.map((r) => r.alias));
        const correlated = columnsIn(sub).some((c) => c.length > 1 && outer.has(c.at(-2)!) && !own.has(c.at(-2)!));
        if (!correlated) continue; // an uncorrelated subquery is planned on its own
        for (const r of inner) {
          if (distributed.includes(r.table))
            out.push({ origin: statement.origin, table: r.table, rule: 'reference-correlates-into-distributed' });
        }
      }
    }
  }
  return out;
}
