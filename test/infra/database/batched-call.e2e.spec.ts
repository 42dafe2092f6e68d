import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { BatchedCall } from '../../../src/infra/database/batched-call';
import { pgPool } from '../../../src/infra/database/prepared';
import { createTestApp, dataSource } from '../../support/test-app';

/**
 * BatchedCall against a real Postgres: a batch form made for the test (each item's argument doubled, and recorded;
 * text that is not a number fails its cast) shows that one item's error fails only that item, and that the others
 * are still written exactly once.
 */
describe('BatchedCall', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createTestApp();
    await dataSource(app).query(`
      CREATE TABLE batched_call_test (value int NOT NULL);
      CREATE FUNCTION batched_call_test_double(p_items jsonb) RETURNS TABLE (item_no int, doubled int)
      LANGUAGE plpgsql AS $fn$
      DECLARE a jsonb; n bigint;
      BEGIN
        FOR a, n IN SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n) LOOP
          INSERT INTO batched_call_test VALUES ((a->>0)::int);
          RETURN QUERY SELECT n::int, 2 * (a->>0)::int;
        END LOOP;
      END
      $fn$;`);
  });
  afterAll(async () => {
    await dataSource(app).query(`DROP FUNCTION batched_call_test_double; DROP TABLE batched_call_test`);
    await app.close();
  });

  it('answers each item in its own place, in one call for a group submitted together', async () => {
    const batched = new BatchedCall<{ doubled: number }>(dataSource(app), {
      name: 'batched_call_test_a',
      text: 'SELECT * FROM batched_call_test_double($1)',
    });
    const query = jest.spyOn(pgPool(dataSource(app)), 'query');
    try {
      const answers = await Promise.all([1, 2, 3].map((n) => batched.call([n])));
      expect(answers).toEqual([{ doubled: 2 }, { doubled: 4 }, { doubled: 6 }]);
      expect(query.mock.calls.filter(([c]) => (c as { name?: string }).name === 'batched_call_test_a')).toHaveLength(1);
    } finally {
      query.mockRestore();
    }
  });

  it('an item that fails fails alone: the group is rolled back and its other items are sent again, each once', async () => {
    await dataSource(app).query(`TRUNCATE batched_call_test`);
    const batched = new BatchedCall<{ doubled: number }>(dataSource(app), {
      name: 'batched_call_test_b',
      text: 'SELECT * FROM batched_call_test_double($1)',
    });
    const answers = await Promise.allSettled([10, 'ten', 30].map((n) => batched.call([n])));
    expect(answers[0]).toEqual({ status: 'fulfilled', value: { doubled: 20 } });
    expect(answers[1]).toEqual({ status: 'rejected', reason: expect.objectContaining({ code: '22P02' }) });
    expect(answers[2]).toEqual({ status: 'fulfilled', value: { doubled: 60 } });
    const rows = await dataSource(app).query(`SELECT value FROM batched_call_test ORDER BY value`);
    expect(rows).toEqual([{ value: 10 }, { value: 30 }]);
  });
});
