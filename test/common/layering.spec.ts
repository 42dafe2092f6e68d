import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * `src/common/` (cross-cutting parts) and `src/infra/` (infrastructure) import no domain: a domain depends on them,
 * never the reverse, so either can be read, tested and reused without the money code behind it.
 */
const SRC = join(__dirname, '..', '..', 'src');
const IMPORT = /(?:from|import|require)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('layering', () => {
  it.each(['common', 'infra'])('src/%s imports only from src/common and src/infra', (layer) => {
    const outside = tsFiles(join(SRC, layer)).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(IMPORT)]
        .map((m) => relative(SRC, resolve(dirname(file), m[1])))
        .filter((target) => !target.startsWith('common/') && !target.startsWith('infra/'))
        .map((target) => `${relative(SRC, file)} -> ${target}`),
    );
    expect(outside).toEqual([]);
  });
});
