import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'crypto';
import { BatchedCall } from '../../../src/infra/database/batched-call';
import { pgPool } from '../../../src/infra/database/prepared';
import { createTestApp, dataSource } from '../../support/test-app';

/**
 * BatchedCall against a real Postgres: a batch form made for the test (each item's argument doubled, and recorded
 * with the call's client; text that is not a number fails its cast) shows that one item's error fails only that item,
 * that the others are still written exactly once, and that a call carries one client's items.
 */
describe('BatchedCall', () => {
  let app: NestFastifyApplication;
  const client = randomUUID();

  beforeAll(async () => {
    app = await createTestApp();
    await dataSource(app).query(`
      CREATE TABLE batched_call_test (client_id uuid NOT NULL, value int NOT NULL);
      CREATE FUNCTION batched_call_test_double(p_client_id uuid, p_items jsonb) RETURNS TABLE (item_no int, doubled int)
      LANGUAGE plpgsql AS $fn$
      DECLARE a jsonb; n bigint;
      BEGIN
        FOR a, n IN SELECT e.a, e.n FROM jsonb_array_elements(p_items) WITH ORDINALITY e(a, n) LOOP
          INSERT INTO batched_call_test VALUES (p_client_id, (a->>0)::int);
          RETURN QUERY SELECT n::int, 2 * (a->>0)::int;
        END LOOP;
      END
      $fn$;`);
  });
  afterAll(async () => {
    await dataSource(app).query(`DROP FUNCTION batched_call_test_double; DROP TABLE batched_call_test`);
    await app.close();
  });

  const batchedCall = (name: string) =>
    new BatchedCall<{ doubled: number }, unknown[]>(dataSource(app), { name, text: 'SELECT * FROM batched_call_test_double($1, $2)' });
  const callsNamed = (query: jest.SpyInstance, name: string) => query.mock.calls.filter(([c]) => (c as { name?: string }).name === name);

  it('answers each item in its own place, in one call for a group submitted together', async () => {
    const batched = batchedCall('batched_call_test_a');
    const query = jest.spyOn(pgPool(dataSource(app)), 'query');
    try {
      const answers = await Promise.all([1, 2, 3].map((n) => batched.call(client, [n])));
      expect(answers).toEqual([{ doubled: 2 }, { doubled: 4 }, { doubled: 6 }]);
      expect(callsNamed(query, 'batched_call_test_a')).toHaveLength(1);
    } finally {
      query.mockRestore();
    }
  });

  it('an item that fails fails alone: the group is rolled back and its other items are sent again, each once', async () => {
    await dataSource(app).query(`TRUNCATE batched_call_test`);
    const batched = batchedCall('batched_call_test_b');
    const answers = await Promise.allSettled([10, 'ten', 30].map((n) => batched.call(client, [n])));
    expect(answers[0]).toEqual({ status: 'fulfilled', value: { doubled: 20 } });
    expect(answers[1]).toEqual({ status: 'rejected', reason: expect.objectContaining({ code: '22P02' }) });
    expect(answers[2]).toEqual({ status: 'fulfilled', value: { doubled: 60 } });
    const rows = await dataSource(app).query(`SELECT value FROM batched_call_test ORDER BY value`);
    expect(rows).toEqual([{ value: 10 }, { value: 30 }]);
  });

  it("items of two clients go in two calls, each with its client's items only", async () => {
    await dataSource(app).query(`TRUNCATE batched_call_test`);
    const other = randomUUID();
    const batched = batchedCall('batched_call_test_c');
    const query = jest.spyOn(pgPool(dataSource(app)), 'query');
    try {
      await Promise.all([1, 2, 3, 4].map((n) => batched.call(n % 2 ? client : other, [n])));
      expect(callsNamed(query, 'batched_call_test_c')).toHaveLength(2);
    } finally {
      query.mockRestore();
    }
    const rows = await dataSource(app).query(
      `SELECT client_id, array_agg(value ORDER BY value) AS values FROM batched_call_test GROUP BY 1`,
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { client_id: client, values: [1, 3] },
        { client_id: other, values: [2, 4] },
      ]),
    );
    expect(rows).toHaveLength(2);
  });
});
