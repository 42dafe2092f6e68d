import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The folders of src/ form layers a reader can follow from the bottom up: `src/common/` (cross-cutting parts)
 * imports nothing else of ours, `src/infra/` (infrastructure) only common, and no two folders import each other,
 * directly or round a longer cycle, so each can be read, tested and changed with only what lies below it in mind.
 * Domain modules name the modules they use in their imports: only infrastructure modules are global.
 */
const SRC = join(__dirname, '..', '..', 'src');
const IMPORT = /(?:from|import|require)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The top folder of a path under src/, or '(root)' for the files beside the folders (main.ts, app.module.ts). */
function folderOf(path: string): string {
  const parts = relative(SRC, path).split('/');
  return parts.length === 1 ? '(root)' : parts[0];
}

/** Every import between two folders, as `from -> to` with the files that make it. */
function folderImports(): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const file of tsFiles(SRC)) {
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = resolve(dirname(file), match[1]);
      const [from, to] = [folderOf(file), folderOf(target)];
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const files = edges.get(from)!.get(to) ?? [];
      edges.get(from)!.set(to, [...files, `${relative(SRC, file)} -> ${relative(SRC, target)}`]);
    }
  }
  return edges;
}

/** The folders that lie on a cycle, grouped by cycle (Tarjan's strongly connected components of more than one). */
function cycles(edges: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (folder: string) => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder)!);
    stack.push(folder);
    for (const next of edges.get(folder)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(folder, Math.min(low.get(folder)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(folder, Math.min(low.get(folder)!, index.get(next)!));
    }
    if (low.get(folder) === index.get(folder)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== folder);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const folder of edges.keys()) if (!index.has(folder)) visit(folder);
  return found;
}

describe('layering', () => {
  const edges = folderImports();
  const importsOf = (from: string) => [...(edges.get(from) ?? new Map<string, string[]>())];

  it('src/common imports nothing of ours outside src/common', () => {
    expect(importsOf('common').flatMap(([, files]) => files)).toEqual([]);
  });

  it('src/infra imports only from src/infra and src/common', () => {
    expect(importsOf('infra').flatMap(([to, files]) => (to === 'common' ? [] : files))).toEqual([]);
  });

  it('no two folders import each other, directly or round a cycle', () => {
    const described = cycles(edges).map((component) =>
      component.flatMap((from) => component.flatMap((to) => edges.get(from)?.get(to) ?? [])),
    );
    expect(described).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself)', () => {
    const made = new Map([
      ['a', new Map([['b', ['a/x.ts -> b/y.ts']]])],
      ['b', new Map([['c', ['b/y.ts -> c/z.ts']]])],
      ['c', new Map([['a', ['c/z.ts -> a/x.ts']]])],
      ['d', new Map([['a', ['d/w.ts -> a/x.ts']]])],
    ]);
    expect(cycles(made)).toEqual([['a', 'b', 'c']]);
  });

  it('only infrastructure modules are global: a domain module imports the modules it uses', () => {
    const globalDomainModules = tsFiles(SRC)
      .filter((file) => file.endsWith('.module.ts') && folderOf(file) !== 'infra')
      .filter((file) => /@Global\(\)/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(globalDomainModules).toEqual([]);
  });
});
