import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { DarajaStub, STUB_CREDENTIALS } from './daraja-stub';
import { dataSource } from './test-app';
import { closeTogether, freePort, IsolatedSandbox, startIsolatedSandbox, waitFor } from './gateway-fixtures';

/** An isolated sandbox whose mobile-money rail is M-Pesa, against the Daraja stub, listening where the stub calls back. */
export interface MpesaSandbox extends IsolatedSandbox {
  stub: DarajaStub;
}

export async function startMpesaSandbox(env: Record<string, string> = {}): Promise<MpesaSandbox> {
  const stub = await new DarajaStub().start();
  const port = await freePort();
  const sandbox = await startIsolatedSandbox({
    RAIL_MOBILE_MONEY: 'mpesa',
    ...STUB_CREDENTIALS,
    MPESA_BASE_URL: stub.baseUrl,
    MPESA_CALLBACK_BASE_URL: `http://127.0.0.1:${port}`,
    MPESA_ALLOWED_IPS: '127.0.0.1',
    MPESA_TIMEOUT_MS: '1500',
    RAIL_RECONCILE_AFTER_MS: '300',
    PAYOUT_RECONCILE_AFTER_MS: '300',
    CALLBACK_RETRY_DELAYS_MS: '300,600,900',
    ...env,
  }).catch(async (error) => {
    await stub.close();
    throw error;
  });
  await sandbox.app.listen({ port, host: '127.0.0.1' });
  return {
    ...sandbox,
    stub,
    /** The stub closes with the app, so it stops calling back while the app winds down. */
    async close() {
      await closeTogether(
        () => sandbox.close(),
        () => stub.close(),
      );
    },
  };
}

/** The rail request about a subject (our record of what we asked M-Pesa, and its answer). */
export async function railRequest(app: NestFastifyApplication, kind: 'PAYMENT' | 'PAYOUT' | 'REVERSAL', subjectId: string) {
  const [row] = await dataSource(app).query(`SELECT * FROM rail_requests WHERE subject_kind = $1 AND subject_id = $2`, [
    kind,
    String(subjectId),
  ]);
  return row as Record<string, any> | undefined;
}

export async function railCallbacks(app: NestFastifyApplication, requestId: string): Promise<Array<Record<string, any>>> {
  return dataSource(app).query(`SELECT * FROM rail_callbacks WHERE rail_request_id = $1 ORDER BY id`, [requestId]);
}

/**
 * Waits until every follow-up job queued for a payout (the recheck a rail answer queues) has run: whatever the
 * answer was to change (entries, the merchant's callback) is written by then.
 */
export function payoutFollowUpsDone(app: NestFastifyApplication, payoutId: string) {
  return waitFor(`the follow-up jobs of payout ${payoutId}`, async () => {
    const rows: { done_at: Date | null }[] = await dataSource(app).query(
      `SELECT done_at FROM outbox WHERE topic = 'payouts.recheck' AND payload->>'payoutId' = $1`,
      [String(payoutId)],
    );
    return rows.length > 0 && rows.every((row) => row.done_at !== null) ? true : undefined;
  });
}

/** `paygate_rail_unknown_answers_total` for M-Pesa's rail and one call (`stk_callback`, `stk_query`, `result_callback`, …). */
export async function unknownAnswers(app: NestFastifyApplication, call: string): Promise<number> {
  const text = (await request(app.getHttpServer()).get('/metrics').expect(200)).text;
  const line = text.split('\n').find((l) => l.startsWith(`paygate_rail_unknown_answers_total{rail="mobile_money",call="${call}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Waits until the stub holds a transaction matching `match`. */
export function stubTransaction(stub: DarajaStub, match: (body: Record<string, any>) => boolean) {
  return waitFor('the stub to take the request', () => stub.transactions.find((t) => match(t.body)));
}
