import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Database functions leave the migrations: from here on each is a source file beside its domain
 * (`src/<domain>/sql/<function>.sql`), applied after the migrations by src/infra/database/function-sources.ts, which
 * records here the checksum of each file it applied, the functions the file defined and a checksum of their
 * definitions as Postgres holds them, so that an unchanged file is not run again unless what it made was changed by
 * other means, and a changed one drops what it defined before. The functions created by earlier migrations are
 * replaced by their source files on the first application.
 */
export class FunctionSources1763800000020 implements MigrationInterface {
  name = 'FunctionSources1763800000020';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE schema_function_sources (
        file text PRIMARY KEY,
        checksum text NOT NULL,
        functions text[] NOT NULL,
        definitions text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE schema_function_sources`);
  }
}
