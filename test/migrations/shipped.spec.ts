import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A shipped migration has run on databases we do not control: editing it changes nothing there and makes a new
 * database differ from an old one. migrations/shipped.sha256 (`sha256sum` format) holds each migration's checksum;
 * a new migration is added to it in the commit that adds it, and no line is ever changed.
 */
const DIR = join(__dirname, '..', '..', 'migrations');

describe('shipped migrations', () => {
  const listed = new Map(
    readFileSync(join(DIR, 'shipped.sha256'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+\*?/) as [string, string])
      .map(([sum, file]) => [file, sum]),
  );
  const files = readdirSync(DIR).filter((file) => file.endsWith('.ts'));

  it('are never edited', () => {
    const edited = [...listed].filter(
      ([file, sum]) =>
        createHash('sha256')
          .update(readFileSync(join(DIR, file)))
          .digest('hex') !== sum,
    );
    expect(edited.map(([file]) => file)).toEqual([]);
  });

  it('are all listed, and none listed is gone', () => {
    expect(files.filter((file) => !listed.has(file))).toEqual([]);
    expect([...listed.keys()].filter((file) => !files.includes(file))).toEqual([]);
  });
});
