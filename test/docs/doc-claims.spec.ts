import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

/**
 * docs/architecture.md and docs/ledger.md name the code they describe; a name the code no longer has is a claim gone
 * stale. Every name written as code (`…`) is checked against the source: file paths, `Class.method`, SQL functions,
 * and the other identifiers (types, constants, functions). The function table lists every database function source
 * (`src/<domain>/sql/<name>.sql`), each under the folder it lives in.
 */
const ROOT = join(__dirname, '..', '..');
const DOCS = ['docs/architecture.md', 'docs/ledger.md'];

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name), keep) : keep(entry.name) ? [join(dir, entry.name)] : [],
  );
}

const sources = files(join(ROOT, 'src'), (name) => name.endsWith('.ts') || name.endsWith('.sql'));
const sourceText = new Map(sources.map((file) => [file, readFileSync(file, 'utf8')]));
const migrationText = files(join(ROOT, 'migrations'), (name) => name.endsWith('.ts'))
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n');
const sqlFunctions = new Map(
  sources.filter((file) => file.endsWith('.sql')).map((file) => [basename(file, '.sql'), relative(ROOT, dirname(file)) + '/']),
);
const allText = [...sourceText.values()].join('\n');
const words = new Set(allText.match(/[A-Za-z_][A-Za-z0-9_]*/g));
const declared = new Set(
  [...allText.matchAll(/\b(?:class|interface|type|enum|const|let|function|abstract class)\s+([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]),
);
const baseNames = new Set(sources.map((file) => basename(file)));

const folders = new Set(files(join(ROOT, 'src'), () => true).flatMap((file) => relative(join(ROOT, 'src'), dirname(file)).split('/')));

/**
 * What a `Class.method` claim needs: the class (or interface), and a member of that name in its file. A class of a
 * library (`EntityManager.query`) is not ours to check.
 */
function hasMember(className: string, member: string): boolean {
  if (!declared.has(className)) return words.has(className);
  return [...sourceText.values()].some(
    (text) =>
      new RegExp(`\\b(?:class|interface)\\s+${className}\\b`).test(text) &&
      new RegExp(`^\\s+(?:(?:private|protected|public|readonly|static|async|get|set|override)\\s+)*${member}\\s*[(<:=?]`, 'm').test(text),
  );
}

/** Why a name written as code does not exist, or null when it does (or is not a name of ours: URLs, words, SQL). */
function missing(token: string): string | null {
  const name = token.replace(/\(.*\)$/, '');
  if (/[\s<>*{}]/.test(name) || name.startsWith('/') || name.startsWith('.')) return null;
  if (/^[\w-]+\/$/.test(name)) return folders.has(name.slice(0, -1)) || existsSync(join(ROOT, name)) ? null : 'no folder of that name';
  if (name.includes('/')) {
    if (!/^[\w.-]+(\/[\w.-]+)*\/?$/.test(name)) return null;
    return [ROOT, join(ROOT, 'src')].some((base) => existsSync(join(base, name))) ? null : 'no such file or folder';
  }
  if (/^[\w-]+\.(ts|sql)$/.test(name)) return baseNames.has(name) ? null : 'no source file of that name';
  const member = /^([A-Z][A-Za-z0-9]*)\.([a-z][A-Za-z0-9]*)$/.exec(name);
  if (member) return hasMember(member[1], member[2]) ? null : `no member ${member[2]} in class ${member[1]}`;
  if (/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(name))
    return sqlFunctions.has(name) || words.has(name) || new RegExp(`\\b${name}\\b`).test(migrationText) ? null : 'not in the source';
  if (/^[A-Z][a-z]+[A-Z][A-Za-z0-9]*$/.test(name) || /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(name))
    return declared.has(name) || words.has(name) ? null : 'not in the source';
  return null;
}

/** The function table: rows of `function | source | …`, each function named in the first column. */
function functionTable(text: string): Array<{ functions: string[]; folder: string }> {
  const lines = text.split('\n');
  const header = lines.findIndex((line) => /^\|\s*function\s*\|\s*source\s*\|/.test(line));
  if (header < 0) return [];
  const rows: Array<{ functions: string[]; folder: string }> = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [first, second] = line.split('|').slice(1);
    rows.push({
      functions: [...first.matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((m) => m[1]),
      folder: /`([^`]+)`/.exec(second)?.[1] ?? '',
    });
  }
  return rows;
}

describe.each(DOCS)('%s', (doc) => {
  const text = readFileSync(join(ROOT, doc), 'utf8');

  it('names only code that exists', () => {
    const stale = [...new Set([...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]))]
      .map((token) => ({ token, why: missing(token) }))
      .filter(({ why }) => why !== null)
      .map(({ token, why }) => `${token}: ${why}`);
    expect(stale).toEqual([]);
  });
});

describe('the database function table (docs/architecture.md)', () => {
  const rows = functionTable(readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8'));

  it('lists every function source, each under the folder that holds it', () => {
    // A function is listed where it is first named (a later row may mention it as a callee).
    const listed = new Map<string, string>();
    for (const { functions, folder } of rows) for (const fn of functions) if (!listed.has(fn)) listed.set(fn, folder);
    expect([...sqlFunctions.keys()].filter((fn) => !listed.has(fn)).sort()).toEqual([]);
    expect([...listed].filter(([fn, folder]) => sqlFunctions.get(fn) !== folder).map(([fn, folder]) => `${fn} in ${folder}`)).toEqual([]);
  });
});
