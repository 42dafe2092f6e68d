import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readFunctionSources } from '../../src/infra/database/function-sources';
import { JOURNAL_ENTRY_KIND } from '../../src/ledger/journal-entry-kind';

/**
 * JOURNAL_ENTRY_KIND is the one list of journal entry kinds. TypeScript can post only those (LedgerService takes a
 * JournalEntryKind) and the statement reads them from it; the SQL writes them as literals, which this reads from the
 * function sources: the kind argument of every call of a posting function, and what the variables it names are
 * assigned. Every kind written must be in the list, and every kind in the list must be written somewhere.
 */
const SRC = join(__dirname, '..', '..', 'src');
/** The ledger functions that take an entry's kind, by the name of that parameter. */
const POSTING = { ledger_post_entry: 'p_kind', ledger_reverse_entry: 'p_kind' } as const;
/** The record ledger_post_entries takes, whose second field is the entry's kind: `ROW(client, kind, lines)::…`. */
const ENTRY_RECORD = 'ledger_entry_to_post';
/** LedgerService's method that posts, whose kind TypeScript names from JOURNAL_ENTRY_KIND. */
const TS_POSTING = ['reverseEntry'];

/** The text between the parenthesis at `open` and its match, split at its top-level commas. */
function argumentsAt(code: string, open: number): string[] {
  return enclosedAt(code, open).args;
}

/** The parenthesis at `open`: its top-level arguments, and the index of its closing parenthesis. */
function enclosedAt(code: string, open: number): { args: string[]; close: number } {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < code.length; i++) {
    const c = code[i];
    if (c === "'") i = code.indexOf("'", i + 1);
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') {
      if (--depth === 0) return { args: [...args, code.slice(start, i)].map((a) => a.trim()), close: i };
    } else if (c === ',' && depth === 1) {
      args.push(code.slice(start, i));
      start = i + 1;
    }
  }
  throw new Error(`unbalanced call at ${code.slice(open, open + 80)}`);
}

/** Every call of `name` in `code` (not its definition), as its arguments. */
function callsOf(code: string, name: string): string[][] {
  return [...code.matchAll(new RegExp(`(?<!FUNCTION\\s+)(?<!\\w)${name}\\s*\\(`, 'gi'))].map((m) =>
    argumentsAt(code, m.index! + m[0].length - 1),
  );
}

/** Every `ROW(…)::ledger_entry_to_post` in `code`, as its fields. */
function entryRecordsOf(code: string): string[][] {
  return [...code.matchAll(/\bROW\s*\(/gi)]
    .map((m) => enclosedAt(code, m.index! + m[0].length - 1))
    .filter(({ close }) => new RegExp(`^\\)\\s*::\\s*${ENTRY_RECORD}\\b`, 'i').test(code.slice(close)))
    .map(({ args }) => args);
}

/** A call's argument for parameter `parameter`: by name (`p_kind => …`), else by its position in the signature. */
function argumentFor(args: string[], parameter: string, position: number): string {
  const named = args.find((a) => new RegExp(`^${parameter}\\s*=>`).test(a));
  return named ? named.replace(/^\w+\s*=>\s*/, '') : args[position];
}

/**
 * The kinds an expression can give: its string literals (not a CASE's `WHEN '…'` conditions) and, for each variable
 * it names whose name ends in `kind` or `kinds`, those of the expressions assigned to it. `readable` is false when the
 * expression holds none of these and takes no kind parameter either: a kind this test cannot read.
 */
function kindsOf(expression: string, code: string, followed = new Set<string>()): { kinds: string[]; readable: boolean } {
  const kinds = [...expression.matchAll(/(\bWHEN\s+)?'([^']*)'/gi)].filter((m) => !m[1]).map((m) => m[2]);
  const variables = [...expression.matchAll(/\b(v_\w*kinds?)\b/gi)].map((m) => m[1]).filter((v) => !followed.has(v));
  for (const variable of variables) {
    followed.add(variable);
    for (const assigned of code.matchAll(new RegExp(`\\b${variable}\\s*:=\\s*([^;]+);`, 'g'))) {
      kinds.push(...kindsOf(assigned[1], code, followed).kinds);
    }
  }
  return { kinds, readable: kinds.length > 0 || variables.length > 0 || /\bp_kinds?\b/.test(expression) };
}

interface Written {
  file: string;
  kind: string;
}

function writtenBySql(): { written: Written[]; unreadable: string[] } {
  const sources = readFunctionSources();
  const written: Written[] = [];
  const unreadable: string[] = [];
  for (const [fn, parameter] of Object.entries(POSTING)) {
    const definition = sources.find((s) => s.functions.includes(fn));
    const signature = definition?.text.match(new RegExp(`FUNCTION\\s+${fn}\\s*\\(([^)]*)\\)`, 'i'))?.[1] ?? '';
    const position = signature.split(',').findIndex((p) => p.trim().startsWith(`${parameter} `));
    if (position < 0) throw new Error(`${fn} has no parameter ${parameter}: tell this test which argument is the kind`);
    for (const source of sources) {
      const code = source.text.replace(/--.*$/gm, '');
      for (const args of callsOf(code, fn)) {
        const expression = argumentFor(args, parameter, position);
        const { kinds, readable } = kindsOf(expression, code);
        if (!readable) unreadable.push(`${source.file}: ${fn}(… ${expression} …)`);
        written.push(...kinds.map((kind) => ({ file: source.file, kind })));
      }
    }
  }
  for (const source of sources) {
    const code = source.text.replace(/--.*$/gm, '');
    for (const fields of entryRecordsOf(code)) {
      const { kinds, readable } = kindsOf(fields[1] ?? '', code);
      if (!readable) unreadable.push(`${source.file}: ROW(… ${fields[1]} …)::${ENTRY_RECORD}`);
      written.push(...kinds.map((kind) => ({ file: source.file, kind })));
    }
  }
  return { written, unreadable };
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

function writtenByTypeScript(): Written[] {
  return tsFiles(SRC).flatMap((path) => {
    const code = readFileSync(path, 'utf8');
    return TS_POSTING.flatMap((method) =>
      callsOf(code, method).flatMap((args) =>
        [...args.join(',').matchAll(/JOURNAL_ENTRY_KIND\.(\w+)/g)].map((m) => ({ file: relative(SRC, path), kind: m[1] })),
      ),
    );
  });
}

describe('journal entry kinds have one list', () => {
  const known: string[] = Object.values(JOURNAL_ENTRY_KIND);
  const { written, unreadable } = writtenBySql();

  it('every kind the SQL functions post is in JOURNAL_ENTRY_KIND', () => {
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((w) => !known.includes(w.kind))).toEqual([]);
  });

  it('every kind argument of a posting call is one this test can read (a literal, a kind variable or parameter)', () => {
    expect(unreadable).toEqual([]);
  });

  it('every kind in JOURNAL_ENTRY_KIND is posted, by the SQL or by TypeScript', () => {
    const posted = new Set([...written, ...writtenByTypeScript()].map((w) => w.kind));
    expect(known.filter((kind) => !posted.has(kind))).toEqual([]);
  });

  it('reads a kind however the SQL writes it: literal, array, CASE result, or through a kind variable', () => {
    const code = `
      v_kinds := v_kinds || 'FLOAT_SETTLE'::text;
      v_kinds := v_kinds || CASE x WHEN 'CREDIT' THEN 'WALLET_CREDIT' ELSE 'NEW_KIND' END;
      PERFORM ledger_post_entries(v_clients, v_kinds, v_entry, v_account, v_amount);
      PERFORM ledger_post_entries(ARRAY[p_client_id], ARRAY['PAYMENT_SPLIT'], array_fill(1, ARRAY[2]), a, b);
      PERFORM ledger_post_entries(c, array_fill('WALLET_' || k, ARRAY[v_count]), e, f, g);
      PERFORM ledger_post_entry(p_client_id => c, p_accounts => a, p_amounts => b, p_kind => 'WALLET_FUNDING');`;
    const kinds = callsOf(code, 'ledger_post_entries').map((args) => kindsOf(argumentFor(args, 'p_kinds', 1), code).kinds);
    expect(kinds).toEqual([['FLOAT_SETTLE', 'WALLET_CREDIT', 'NEW_KIND'], ['PAYMENT_SPLIT'], ['WALLET_']]);
    const [funding] = callsOf(code, 'ledger_post_entry').map((args) => kindsOf(argumentFor(args, 'p_kind', 1), code).kinds);
    expect(funding).toEqual(['WALLET_FUNDING']);
  });
});
